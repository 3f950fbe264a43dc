import { type FormEvent, useState } from "react";
import type { Credentials } from "./session";

interface KeyFormProps {
  /** Why the key is asked for again (a 401), if it is. */
  notice?: string;
  onSubmit: (credentials: Credentials) => void;
}

/** Asks for the API key (and, for a key of several workspaces, which one). */
export function KeyForm({ notice, onSubmit }: KeyFormProps) {
  const [apiKey, setApiKey] = useState("");
  const [tenantId, setTenantId] = useState("");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (apiKey.trim()) onSubmit({ apiKey: apiKey.trim(), tenantId: tenantId.trim() || undefined });
  };
  return (
    <main className="narrow">
      <h1>Sign in to Berth</h1>
      {notice && (
        <p role="alert" className="error">
          {notice}
        </p>
      )}
      <form onSubmit={submit} className="stack">
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          required
          value={apiKey}
          onChange={(event) => setApiKey(event.target.value)}
        />
        <label htmlFor="tenant-id">Workspace (tenant id)</label>
        <input
          id="tenant-id"
          type="text"
          autoComplete="off"
          aria-describedby="tenant-hint"
          value={tenantId}
          onChange={(event) => setTenantId(event.target.value)}
        />
        <p id="tenant-hint" className="hint">
          Optional: only for a key that reaches several workspaces.
        </p>
        <button type="submit">Sign in</button>
      </form>
      <p className="hint">The key is kept in this tab's session storage until you sign out or close the tab.</p>
    </main>
  );
}
