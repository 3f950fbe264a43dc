import { createServiceLogger, type Logger } from "@berth/service-kit";

export const createLogger = (): Logger => createServiceLogger("agent-server");

export type { Logger };
