// The Auth Service's store: providers unique per workspace, users' tokens with
// one default per user and provider, consent flows finished once, agent
// connections, and what goes with a deleted provider or token.
import assert from "node:assert/strict";
import { ConflictError } from "@berth/service-kit";
import { beforeEach, describe, it } from "node:test";
import type { OAuthProviderChange, OAuthTokenChange, OAuthTokenRecord } from "../../../src/storage/auth-types.js";
import type { ControlPlaneStorage } from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";
import { isConflict, newConnection, newFlow, newProvider, newTenant, newToken, tick } from "./fixtures.js";

export function authContract(backend: Backend): void {
  describe("auth service", () => {
    const db = databasePerTest(backend);
    let a: ControlPlaneStorage;
    let b: ControlPlaneStorage;

    beforeEach(() => {
      ({ a, b } = db);
    });

    /** The ids of the user's default tokens for the provider (at most one). */
    const defaults = async (tenantId: string, userId: string, providerId: string) =>
      (await a.auth.listTokens(tenantId, userId, providerId)).filter((token) => token.is_default).map((token) => token.id);

    /** Stores the token with the provider it names, creating the provider when the workspace has none of that provider_id. */
    const stored = async (token: OAuthTokenRecord) => {
      if (!(await a.auth.getProvider(token.tenant_id, token.provider_id))) {
        await a.auth.createProvider(newProvider(token.tenant_id, token.provider_id));
      }
      await a.auth.createToken(token);
      return token;
    };

    it("stores providers, one per provider_id in a workspace, and updates what a change names", async () => {
      const t = await newTenant(a);
      const other = await newTenant(a);
      const slack = newProvider(t, "slack");
      await a.auth.createProvider(slack);
      assert.deepEqual(await b.auth.getProvider(t, "slack"), slack);
      assert.equal(await b.auth.getProvider(other, "slack"), undefined);
      assert.equal(await b.auth.getProvider(t, "missing"), undefined);
      await assert.rejects(
        b.auth.createProvider(newProvider(t, "slack")),
        isConflict('A provider with provider_id "slack" already exists'),
      );
      // Another workspace may use the same provider_id.
      const otherSlack = newProvider(other, "slack", {
        provider_type: null,
        is_dynamic_client: true,
        mcp_server_url: "https://mcp",
      });
      await b.auth.createProvider(otherSlack);
      assert.deepEqual(await a.auth.getProvider(other, "slack"), otherSlack);

      // Concurrent creations of one provider_id from two storages: one wins, the others conflict.
      const racers = Array.from({ length: 4 }, () => newProvider(t, "microsoft", { provider_type: "microsoft" }));
      const results = await Promise.allSettled(racers.map((p, i) => (i % 2 ? b : a).auth.createProvider(p)));
      assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
      for (const r of results) if (r.status === "rejected") assert.ok(r.reason instanceof ConflictError);
      const winner = racers[results.findIndex((r) => r.status === "fulfilled")];
      assert.deepEqual(await a.auth.listProviders(t), [slack, winner]);
      assert.deepEqual(await a.auth.listProviders(other), [otherSlack]);
      assert.deepEqual(await a.auth.listProviders("nobody"), []);

      // Every changeable field at once (nullable ones to null), then one, then none: updated_at always moves.
      const change: Required<OAuthProviderChange> = {
        name: "Slack (renamed)",
        client_id: "client-2",
        client_secret_ciphertext: null,
        auth_url: "https://idp2.example/authorize",
        token_url: "https://idp2.example/token",
        revocation_url: null,
        uses_pkce: false,
        code_challenge_method: null,
        token_endpoint_auth_method: "none",
        shared_across_deployments: true,
      };
      let at = tick();
      const updated = await b.auth.updateProvider(t, "slack", change, at);
      assert.deepEqual(updated, { ...slack, ...change, updated_at: at });
      assert.deepEqual(await a.auth.getProvider(t, "slack"), updated);
      at = tick();
      const renamed = await a.auth.updateProvider(
        t,
        "slack",
        { name: "Slack", revocation_url: "https://idp2.example/revoke" },
        at,
      );
      assert.deepEqual(renamed, { ...updated, name: "Slack", revocation_url: "https://idp2.example/revoke", updated_at: at });
      at = tick();
      assert.deepEqual(await a.auth.updateProvider(t, "slack", {}, at), { ...renamed, updated_at: at });
      assert.deepEqual(await a.auth.updateProvider(t, "slack", { uses_pkce: true }, at), {
        ...renamed,
        uses_pkce: true,
        updated_at: at,
      });
      // Another workspace's provider of that provider_id is untouched; a missing one is not found.
      assert.deepEqual(await a.auth.getProvider(other, "slack"), otherSlack);
      assert.equal(await a.auth.updateProvider("nobody", "slack", { name: "x" }, tick()), undefined);
      assert.equal(await a.auth.updateProvider(t, "missing", { name: "x" }, tick()), undefined);
      assert.deepEqual(await b.auth.listProviders(other), [otherSlack]);

      assert.equal(await a.auth.deleteProvider("nobody", "slack"), false);
      assert.equal(await a.auth.deleteProvider(t, "missing"), false);
      assert.equal(await b.auth.deleteProvider(t, "slack"), true);
      assert.equal(await a.auth.deleteProvider(t, "slack"), false);
      assert.equal(await a.auth.getProvider(t, "slack"), undefined);
      assert.deepEqual(await a.auth.getProvider(other, "slack"), otherSlack);
      // Its provider_id is free again.
      const again = newProvider(t, "slack");
      await a.auth.createProvider(again);
      assert.deepEqual(await b.auth.listProviders(t), [winner, again]);
    });

    it("stores users' tokens, lists them oldest first, and keeps one default per user and provider", async () => {
      const t = await newTenant(a);
      const other = await newTenant(a);
      const first = await stored(newToken(t, "slack", "user-1", { is_default: true }));
      const second = await stored(
        newToken(t, "slack", "user-1", { scopes: [], refresh_token_ciphertext: null, expires_at: null }),
      );
      const ms = await stored(newToken(t, "microsoft", "user-1", { is_default: true }));
      const colleague = await stored(newToken(t, "slack", "user-2", { is_default: true }));
      const elsewhere = await stored(newToken(other, "slack", "user-1", { is_default: true }));
      assert.deepEqual(await b.auth.getToken(t, first.id), first);
      assert.deepEqual(await b.auth.getToken(t, second.id), second);
      assert.equal(await b.auth.getToken(other, first.id), undefined);
      assert.equal(await b.auth.getToken(t, elsewhere.id), undefined);
      assert.equal(await b.auth.getToken(t, "missing"), undefined);

      // A new default unmarks the user's previous one for that provider only.
      const third = await stored(newToken(t, "slack", "user-1", { is_default: true }));
      const unmarked = { ...first, is_default: false };
      assert.deepEqual(await b.auth.getToken(t, first.id), unmarked);
      assert.deepEqual(await b.auth.listTokens(t, "user-1"), [unmarked, second, ms, third]);
      assert.deepEqual(await b.auth.listTokens(t, "user-1", "slack"), [unmarked, second, third]);
      assert.deepEqual(await b.auth.listTokens(t, "user-1", "microsoft"), [ms]);
      assert.deepEqual(await b.auth.listTokens(t, "user-1", "missing"), []);
      assert.deepEqual(await b.auth.listTokens(t, "user-2"), [colleague]);
      assert.deepEqual(await b.auth.listTokens(t, "nobody"), []);
      assert.deepEqual(await b.auth.listTokens(other, "user-1"), [elsewhere]);
      assert.deepEqual(await b.auth.listProviderTokens(t, "slack"), [unmarked, second, colleague, third]);
      assert.deepEqual(await b.auth.listProviderTokens(t, "microsoft"), [ms]);
      assert.deepEqual(await b.auth.listProviderTokens(other, "slack"), [elsewhere]);
      assert.deepEqual(await b.auth.listProviderTokens("nobody", "slack"), []);

      // Marking one default by update unmarks the previous one, in that workspace, for that user and provider.
      let at = tick();
      const marked = await a.auth.updateToken(t, second.id, { is_default: true }, at);
      assert.deepEqual(marked, { ...second, is_default: true, updated_at: at });
      assert.deepEqual(await defaults(t, "user-1", "slack"), [second.id]);
      assert.equal((await b.auth.getToken(t, third.id))?.is_default, false);
      assert.equal((await b.auth.getToken(t, third.id))?.updated_at, third.updated_at); // unmarking is no update of its own
      assert.deepEqual(await defaults(t, "user-1", "microsoft"), [ms.id]);
      assert.deepEqual(await defaults(t, "user-2", "slack"), [colleague.id]);
      assert.deepEqual(await defaults(other, "user-1", "slack"), [elsewhere.id]);
      // Marking the default again changes nothing else.
      at = tick();
      assert.deepEqual(await a.auth.updateToken(t, second.id, { is_default: true }, at), { ...marked, updated_at: at });
      assert.deepEqual(await defaults(t, "user-1", "slack"), [second.id]);

      // Another workspace's token, or a missing one, is not found and unmarks nothing.
      assert.equal(await b.auth.updateToken(other, third.id, { is_default: true }, tick()), undefined);
      assert.equal(await b.auth.updateToken(t, elsewhere.id, { is_default: true }, tick()), undefined);
      assert.equal(await b.auth.updateToken(t, "missing", { is_default: true }, tick()), undefined);
      assert.deepEqual(await defaults(t, "user-1", "slack"), [second.id]);
      assert.deepEqual(await defaults(other, "user-1", "slack"), [elsewhere.id]);
      assert.deepEqual(await b.auth.getToken(other, elsewhere.id), elsewhere);

      // Every changeable field at once (nullable ones to null), then one, then none.
      const change: Required<OAuthTokenChange> = {
        provider_account_label: null,
        scopes: ["a", "b c", "ü"],
        access_token_ciphertext: "v1:access-2",
        refresh_token_ciphertext: null,
        token_type: null,
        expires_at: null,
        is_default: true,
      };
      at = tick();
      const changed = await b.auth.updateToken(t, first.id, change, at);
      assert.deepEqual(changed, { ...first, ...change, updated_at: at });
      assert.deepEqual(await a.auth.getToken(t, first.id), changed);
      assert.deepEqual(await defaults(t, "user-1", "slack"), [first.id]);
      at = tick();
      const refreshed = await b.auth.updateToken(
        t,
        first.id,
        { access_token_ciphertext: "v1:access-3", expires_at: "2025-03-01T00:00:00.000Z" },
        at,
      );
      assert.deepEqual(refreshed, {
        ...changed,
        access_token_ciphertext: "v1:access-3",
        expires_at: "2025-03-01T00:00:00.000Z",
        updated_at: at,
      });
      at = tick();
      assert.deepEqual(await b.auth.updateToken(t, first.id, {}, at), { ...refreshed, updated_at: at });
      // Unmarking the default leaves none.
      at = tick();
      assert.deepEqual(await a.auth.updateToken(t, first.id, { is_default: false }, at), {
        ...refreshed,
        is_default: false,
        updated_at: at,
      });
      assert.deepEqual(await defaults(t, "user-1", "slack"), []);
    });

    it("keeps one default token per user and provider under concurrent changes from two storages", async () => {
      const t = await newTenant(a);
      const tokens: OAuthTokenRecord[] = [];
      for (let i = 0; i < 6; i++) tokens.push(await stored(newToken(t, "slack", "user-1")));
      const colleague = await stored(newToken(t, "slack", "user-2", { is_default: true }));
      const ms = await stored(newToken(t, "microsoft", "user-1", { is_default: true }));

      const updated = await Promise.all(
        tokens.map((token, i) => (i % 2 ? b : a).auth.updateToken(t, token.id, { is_default: true }, tick())),
      );
      assert.ok(updated.every((token) => token?.is_default === true)); // each was the default, for a moment
      const [winner] = await defaults(t, "user-1", "slack");
      assert.deepEqual(await defaults(t, "user-1", "slack"), [winner]);

      // New defaults created concurrently, while others are marked: again one.
      const fresh = Array.from({ length: 4 }, () => newToken(t, "slack", "user-1", { is_default: true }));
      await Promise.all([
        ...fresh.map((token, i) => (i % 2 ? b : a).auth.createToken(token)),
        ...tokens.slice(0, 2).map((token, i) => (i % 2 ? a : b).auth.updateToken(t, token.id, { is_default: true }, tick())),
      ]);
      const [last] = await defaults(t, "user-1", "slack");
      assert.deepEqual(await defaults(t, "user-1", "slack"), [last]);
      assert.ok([...fresh, ...tokens.slice(0, 2)].some((token) => token.id === last));
      assert.equal((await b.auth.listTokens(t, "user-1", "slack")).length, 10);
      // Other users' and providers' defaults never moved.
      assert.deepEqual(await defaults(t, "user-2", "slack"), [colleague.id]);
      assert.deepEqual(await defaults(t, "user-1", "microsoft"), [ms.id]);
    });

    it("connects agents to tokens once per agent and token", async () => {
      const t = await newTenant(a);
      const other = await newTenant(a);
      const token = await stored(newToken(t, "slack", "user-1"));
      const second = await stored(newToken(t, "slack", "user-2"));
      const elsewhere = await stored(newToken(other, "slack", "user-1"));
      const first = newConnection(t, "agent-1", token.id);
      await a.auth.createConnection(first);
      const toSecond = newConnection(t, "agent-1", second.id, "user-2");
      await b.auth.createConnection(toSecond);
      const otherAgent = newConnection(t, "agent-2", token.id);
      await a.auth.createConnection(otherAgent);
      const otherWorkspace = newConnection(other, "agent-1", elsewhere.id);
      await a.auth.createConnection(otherWorkspace);

      assert.deepEqual(await b.auth.listConnections(t, "agent-1"), [first, toSecond]);
      assert.deepEqual(await b.auth.listConnections(t, "agent-2"), [otherAgent]);
      assert.deepEqual(await b.auth.listConnections(other, "agent-1"), [otherWorkspace]);
      assert.deepEqual(await b.auth.listConnections(t, "agent-9"), []);
      assert.deepEqual(await b.auth.listConnections("nobody", "agent-1"), []);

      await assert.rejects(
        b.auth.createConnection(newConnection(t, "agent-1", token.id)),
        isConflict(`Agent agent-1 is already connected to token ${token.id}`),
      );
      const racers = Array.from({ length: 4 }, () => newConnection(t, "agent-3", token.id));
      const results = await Promise.allSettled(racers.map((c, i) => (i % 2 ? b : a).auth.createConnection(c)));
      assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
      for (const r of results) if (r.status === "rejected") assert.ok(r.reason instanceof ConflictError);
      assert.equal((await a.auth.listConnections(t, "agent-3")).length, 1);

      // Only the workspace's connection of that agent is deleted.
      assert.equal(await a.auth.deleteConnection(other, "agent-1", first.id), false);
      assert.equal(await a.auth.deleteConnection(t, "agent-2", first.id), false);
      assert.equal(await a.auth.deleteConnection(t, "agent-1", "missing"), false);
      assert.equal(await b.auth.deleteConnection(t, "agent-1", first.id), true);
      assert.equal(await a.auth.deleteConnection(t, "agent-1", first.id), false);
      assert.deepEqual(await a.auth.listConnections(t, "agent-1"), [toSecond]);
      assert.deepEqual(await a.auth.listConnections(other, "agent-1"), [otherWorkspace]);
      // The agent may connect to that token again.
      const again = newConnection(t, "agent-1", token.id);
      await a.auth.createConnection(again);
      assert.deepEqual(await b.auth.listConnections(t, "agent-1"), [toSecond, again]);
    });

    it("deletes a token with its agent connections, in its workspace only", async () => {
      const t = await newTenant(a);
      const other = await newTenant(a);
      const token = await stored(newToken(t, "slack", "user-1", { is_default: true }));
      const kept = await stored(newToken(t, "slack", "user-1"));
      const elsewhere = await stored(newToken(other, "slack", "user-1"));
      const connections = [newConnection(t, "agent-1", token.id), newConnection(t, "agent-2", token.id)];
      const keptConnection = newConnection(t, "agent-1", kept.id);
      for (const c of [...connections, keptConnection, newConnection(other, "agent-1", elsewhere.id)]) {
        await a.auth.createConnection(c);
      }

      assert.equal(await b.auth.deleteToken(other, token.id), false);
      assert.equal(await b.auth.deleteToken(t, elsewhere.id), false);
      assert.equal(await b.auth.deleteToken(t, "missing"), false);
      assert.deepEqual(await a.auth.getToken(t, token.id), token);
      assert.equal(await b.auth.deleteToken(t, token.id), true);
      assert.equal(await a.auth.deleteToken(t, token.id), false);
      assert.equal(await a.auth.getToken(t, token.id), undefined);
      assert.deepEqual(await a.auth.listTokens(t, "user-1"), [kept]);
      assert.deepEqual(await a.auth.listConnections(t, "agent-1"), [keptConnection]);
      assert.deepEqual(await a.auth.listConnections(t, "agent-2"), []);
      assert.equal((await a.auth.listConnections(other, "agent-1")).length, 1);
      assert.deepEqual(await a.auth.getToken(other, elsewhere.id), elsewhere);
    });

    it("finishes a pending consent flow exactly once", async () => {
      const t = await newTenant(a);
      await a.auth.createProvider(newProvider(t, "slack"));
      const flow = newFlow(t, "slack", "user-1", { agent_id: "agent-1", scopes: ["openid", "files:read"] });
      await a.auth.createFlow(flow);
      // By id alone, through either storage.
      assert.deepEqual(await b.auth.getFlow(flow.id), flow);
      assert.equal(await b.auth.getFlow("missing"), undefined);

      let at = tick();
      const completed = await b.auth.finishFlow(flow.id, { status: "completed", token_id: "token-1" }, at);
      assert.deepEqual(completed, { ...flow, status: "completed", token_id: "token-1", error: null, finished_at: at });
      assert.deepEqual(await a.auth.getFlow(flow.id), completed);
      // A replayed state finds it finished, and changes nothing.
      assert.equal(await a.auth.finishFlow(flow.id, { status: "completed", token_id: "token-2" }, tick()), undefined);
      assert.equal(await b.auth.finishFlow(flow.id, { status: "failed", error: "replayed" }, tick()), undefined);
      assert.deepEqual(await a.auth.getFlow(flow.id), completed);
      assert.equal(await a.auth.finishFlow("missing", { status: "completed", token_id: "token-1" }, tick()), undefined);

      // A failure records its error; what the outcome leaves out is null.
      const failing = newFlow(t, "slack", "user-2", { code_verifier_ciphertext: null, is_default: false });
      await b.auth.createFlow(failing);
      at = tick();
      const failed = await a.auth.finishFlow(failing.id, { status: "failed", error: "access_denied" }, at);
      assert.deepEqual(failed, { ...failing, status: "failed", error: "access_denied", finished_at: at });
      assert.equal(await a.auth.finishFlow(failing.id, { status: "completed", token_id: "t" }, tick()), undefined);
      assert.deepEqual(await b.auth.getFlow(failing.id), failed);
    });

    it("finishes a flow once when finishes race, from one storage and from two", async () => {
      const t = await newTenant(a);
      await a.auth.createProvider(newProvider(t, "slack"));
      for (const storages of [
        [a, a, a, a],
        [a, b, a, b, b, a],
      ]) {
        const flow = newFlow(t, "slack", "user-1");
        await a.auth.createFlow(flow);
        const at = tick();
        const results = await Promise.all(
          storages.map((s, i) =>
            s.auth.finishFlow(
              flow.id,
              i % 3 ? { status: "completed", token_id: `token-${i}` } : { status: "failed", error: `e-${i}` },
              at,
            ),
          ),
        );
        const winners = results.filter((r) => r !== undefined);
        assert.equal(winners.length, 1);
        assert.deepEqual(await b.auth.getFlow(flow.id), winners[0]);
        assert.equal(winners[0]?.finished_at, at);
      }
    });

    it("deletes the flows that expired before a time, whatever their status", async () => {
      const t = await newTenant(a);
      await a.auth.createProvider(newProvider(t, "slack"));
      const cutoff = "2025-06-01T00:00:00.000Z";
      const expiry = (ms: number) => new Date(Date.parse(cutoff) + ms).toISOString();
      const long = newFlow(t, "slack", "user-1", { expires_at: expiry(-86_400_000) });
      const finished = newFlow(t, "slack", "user-1", { expires_at: expiry(-1) });
      const atCutoff = newFlow(t, "slack", "user-1", { expires_at: expiry(0) });
      const later = newFlow(t, "slack", "user-2", { expires_at: expiry(1) });
      for (const flow of [long, finished, atCutoff, later]) await a.auth.createFlow(flow);
      await a.auth.finishFlow(finished.id, { status: "completed", token_id: "token-1" }, tick());

      assert.equal(await a.auth.deleteExpiredFlows("2024-01-01T00:00:00.000Z"), 0);
      assert.equal(await b.auth.deleteExpiredFlows(cutoff), 2);
      assert.equal(await b.auth.getFlow(long.id), undefined);
      assert.equal(await b.auth.getFlow(finished.id), undefined);
      assert.deepEqual(await b.auth.getFlow(atCutoff.id), atCutoff);
      assert.deepEqual(await b.auth.getFlow(later.id), later);
      assert.equal(await a.auth.deleteExpiredFlows(cutoff), 0);
      // An expired flow is gone, and cannot be finished.
      assert.equal(await a.auth.finishFlow(long.id, { status: "completed", token_id: "t" }, tick()), undefined);
      assert.equal(await a.auth.deleteExpiredFlows(expiry(2)), 2);
      assert.equal(await a.auth.getFlow(later.id), undefined);
    });

    it("deletes a provider with its tokens, their connections and its flows, and nothing else", async () => {
      const t = await newTenant(a);
      const other = await newTenant(a);
      const slack = [
        await stored(newToken(t, "slack", "user-1", { is_default: true })),
        await stored(newToken(t, "slack", "user-2")),
      ];
      const ms = await stored(newToken(t, "microsoft", "user-1", { is_default: true }));
      const elsewhere = await stored(newToken(other, "slack", "user-1", { is_default: true }));
      const msConnection = newConnection(t, "agent-1", ms.id);
      const elsewhereConnection = newConnection(other, "agent-1", elsewhere.id);
      for (const c of [
        newConnection(t, "agent-1", slack[0].id),
        msConnection,
        newConnection(t, "agent-2", slack[1].id),
        elsewhereConnection,
      ]) {
        await a.auth.createConnection(c);
      }
      const slackFlows = [newFlow(t, "slack", "user-1"), newFlow(t, "slack", "user-2")];
      const msFlow = newFlow(t, "microsoft", "user-1");
      const elsewhereFlow = newFlow(other, "slack", "user-1");
      for (const flow of [...slackFlows, msFlow, elsewhereFlow]) await a.auth.createFlow(flow);
      await a.auth.finishFlow(slackFlows[1].id, { status: "completed", token_id: slack[1].id }, tick());
      const msProvider = await a.auth.getProvider(t, "microsoft");
      const otherProvider = await a.auth.getProvider(other, "slack");

      assert.equal(await b.auth.deleteProvider(t, "slack"), true);
      assert.equal(await a.auth.getProvider(t, "slack"), undefined);
      assert.deepEqual(await a.auth.listProviders(t), [msProvider]);
      for (const token of slack) assert.equal(await a.auth.getToken(t, token.id), undefined);
      assert.deepEqual(await a.auth.listProviderTokens(t, "slack"), []);
      assert.deepEqual(await a.auth.listTokens(t, "user-1"), [ms]);
      assert.deepEqual(await a.auth.listTokens(t, "user-2"), []);
      assert.deepEqual(await a.auth.listConnections(t, "agent-1"), [msConnection]);
      assert.deepEqual(await a.auth.listConnections(t, "agent-2"), []);
      for (const flow of slackFlows) assert.equal(await a.auth.getFlow(flow.id), undefined);
      assert.deepEqual(await a.auth.getFlow(msFlow.id), msFlow);
      // The other workspace's provider of that provider_id keeps everything.
      assert.deepEqual(await a.auth.listProviders(other), [otherProvider]);
      assert.deepEqual(await a.auth.listProviderTokens(other, "slack"), [elsewhere]);
      assert.deepEqual(await a.auth.listConnections(other, "agent-1"), [elsewhereConnection]);
      assert.deepEqual(await a.auth.getFlow(elsewhereFlow.id), elsewhereFlow);

      // A provider created again under that provider_id starts with nothing.
      await a.auth.createProvider(newProvider(t, "slack"));
      assert.deepEqual(await b.auth.listProviderTokens(t, "slack"), []);
      assert.deepEqual(await b.auth.listTokens(t, "user-2"), []);
    });
  });
}
