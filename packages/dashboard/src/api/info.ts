import type { ServerInfo } from "./types";

/** The version of the Berth serving the page (`GET info`, open without a key): shown in the page's header. */
export async function loadServerInfo(): Promise<ServerInfo> {
  const response = await fetch(new URL("info", document.baseURI));
  if (!response.ok) throw new Error(`The control plane answered ${response.status} for info`);
  return (await response.json()) as ServerInfo;
}
