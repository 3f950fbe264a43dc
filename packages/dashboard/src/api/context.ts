import { createContext, useContext } from "react";
import type { Credentials } from "../auth/session";
import type { ApiClient } from "./client";

export interface Session {
  api: ApiClient;
  credentials: Credentials;
}

export const SessionContext = createContext<Session | undefined>(undefined);

/** The signed-in session; the pages render only inside one. */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside a signed-in page");
  return session;
}
