/**
 * The API key lives in the tab's sessionStorage: it is entered once per tab,
 * survives reloads, and is gone when the tab closes. Any script running on
 * this origin could read it, which is why the dashboard loads nothing from
 * elsewhere (docs/dashboard.md).
 */
export interface Credentials {
  apiKey: string;
  tenantId?: string;
}

const KEY = "berth.apiKey";
const TENANT = "berth.tenantId";

export function loadCredentials(): Credentials | undefined {
  const apiKey = sessionStorage.getItem(KEY);
  if (!apiKey) return undefined;
  const tenantId = sessionStorage.getItem(TENANT) ?? undefined;
  return { apiKey, tenantId: tenantId || undefined };
}

export function saveCredentials({ apiKey, tenantId }: Credentials): void {
  sessionStorage.setItem(KEY, apiKey);
  if (tenantId) sessionStorage.setItem(TENANT, tenantId);
  else sessionStorage.removeItem(TENANT);
}

export function clearCredentials(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(TENANT);
}
