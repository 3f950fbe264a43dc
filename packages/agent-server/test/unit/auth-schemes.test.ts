import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, test } from "node:test";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { builtinAuthSettingsFromEnv } from "../../src/config/settings.js";
import { builtinAuthenticator } from "../../src/http/auth/builtin-schemes.js";

/** The schemes the variables turn on, as the server reads them. */
const schemesOf = (env: Record<string, string>) => builtinAuthenticator(builtinAuthSettingsFromEnv(env));
import { toRequestUser } from "../../src/http/auth/request-user.js";

const SECRET = "a-shared-secret-of-at-least-32-characters";
const hs = (claims: Record<string, unknown>, options: { exp?: string | number; iss?: string; aud?: string } = {}) => {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setIssuedAt();
  if (options.exp !== undefined) jwt.setExpirationTime(options.exp);
  if (options.iss) jwt.setIssuer(options.iss);
  if (options.aud) jwt.setAudience(options.aud);
  return jwt.sign(new TextEncoder().encode(SECRET));
};

describe("built-in authentication schemes", () => {
  test("no scheme configured: none", () => {
    assert.equal(schemesOf({}), undefined);
  });

  test("API keys: a listed key (bearer or X-Api-Key) names its user; another key is refused; none is no credential", async () => {
    const authenticate = schemesOf({
      BERTH_AUTH_API_KEYS: JSON.stringify({
        "alice-key-0123456789": "alice",
        "bob-key-0123456789ab": { identity: "bob", permissions: ["admin"] },
      }),
    })!;
    assert.equal(await authenticate({ authorization: "Bearer alice-key-0123456789" }), "alice");
    assert.deepEqual(await authenticate({ "x-api-key": "bob-key-0123456789ab" }), { identity: "bob", permissions: ["admin"] });
    await assert.rejects(authenticate({ authorization: "Bearer nope-nope-nope-nope" }), /Invalid API key/);
    assert.equal(await authenticate({}), undefined);
  });

  test("API keys: a malformed list stops the start with a message", () => {
    assert.throws(() => schemesOf({ BERTH_AUTH_API_KEYS: "not json" }), /JSON object/);
    assert.throws(() => schemesOf({ BERTH_AUTH_API_KEYS: JSON.stringify({ short: "x" }) }), /16 characters/);
  });

  test("JWT with a shared secret: issuer, audience and expiry checked; identity and permissions from the claims", async () => {
    const authenticate = schemesOf({
      BERTH_AUTH_JWT_SECRET: SECRET,
      BERTH_AUTH_JWT_ISSUER: "https://issuer.example",
      BERTH_AUTH_JWT_AUDIENCE: "berth",
      BERTH_AUTH_JWT_CLOCK_SKEW_SECONDS: "5",
    })!;
    const good = await hs({ sub: "carol", scope: "read write" }, { exp: "5m", iss: "https://issuer.example", aud: "berth" });
    const user = (await authenticate({ authorization: `Bearer ${good}` })) as { identity: string; permissions: string[] };
    assert.equal(user.identity, "carol");
    assert.deepEqual(user.permissions, ["read", "write"]);
    const expired = await hs(
      { sub: "carol" },
      { exp: Math.floor(Date.now() / 1000) - 60, iss: "https://issuer.example", aud: "berth" },
    );
    await assert.rejects(authenticate({ authorization: `Bearer ${expired}` }), /Invalid token.*exp/);
    const otherIssuer = await hs({ sub: "carol" }, { exp: "5m", iss: "https://evil.example", aud: "berth" });
    await assert.rejects(authenticate({ authorization: `Bearer ${otherIssuer}` }), /Invalid token.*iss/);
    const noSubject = await hs({}, { exp: "5m", iss: "https://issuer.example", aud: "berth" });
    await assert.rejects(authenticate({ authorization: `Bearer ${noSubject}` }), /no "sub" claim/);
  });

  test("JWT: a verified token taken again on trust stops working when it expires", async () => {
    const authenticate = schemesOf({ BERTH_AUTH_JWT_SECRET: SECRET, BERTH_AUTH_JWT_CLOCK_SKEW_SECONDS: "0" })!;
    const expiresAt = Math.floor(Date.now() / 1000) + 1;
    const token = await hs({ sub: "dave" }, { exp: expiresAt });
    for (let i = 0; i < 2; i++) {
      assert.equal(((await authenticate({ authorization: `Bearer ${token}` })) as { identity: string }).identity, "dave");
    }
    // The expiry is the subject here: wait until the clock passes it.
    await new Promise((resolve) => setTimeout(resolve, expiresAt * 1000 - Date.now() + 50));
    await assert.rejects(authenticate({ authorization: `Bearer ${token}` }), /Invalid token.*exp/);
  });

  describe("JWT against a JWKS URL", () => {
    let server: Server;
    let url: string;
    let privateKey: CryptoKey;
    before(async () => {
      const pair = await generateKeyPair("RS256");
      privateKey = pair.privateKey as CryptoKey;
      const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
      server = createServer((_, response) =>
        response.setHeader("content-type", "application/json").end(JSON.stringify({ keys: [jwk] })),
      );
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(server.address() as { port: number }).port}/jwks.json`;
    });
    after(() => server.close());

    test("a token signed by a published key is accepted; one signed by another key is refused", async () => {
      const authenticate = schemesOf({ BERTH_AUTH_JWT_JWKS_URL: url })!;
      const token = await new SignJWT({ sub: "dave", permissions: ["p1"] })
        .setProtectedHeader({ alg: "RS256", kid: "k1" })
        .setExpirationTime("5m")
        .sign(privateKey);
      assert.deepEqual(((await authenticate({ authorization: `Bearer ${token}` })) as { permissions: string[] }).permissions, [
        "p1",
      ]);
      const stranger = (await generateKeyPair("RS256")).privateKey;
      const forged = await new SignJWT({ sub: "dave" })
        .setProtectedHeader({ alg: "RS256", kid: "k1" })
        .setExpirationTime("5m")
        .sign(stranger);
      await assert.rejects(authenticate({ authorization: `Bearer ${forged}` }), /Invalid token/);
    });
  });

  test("a user is an identity with permissions, is_authenticated and display_name", () => {
    assert.deepEqual(toRequestUser("erin"), { identity: "erin", permissions: [], is_authenticated: true, display_name: "erin" });
    assert.deepEqual(toRequestUser({ identity: "frank", permissions: ["a"], org: "x" }), {
      identity: "frank",
      permissions: ["a"],
      org: "x",
      is_authenticated: true,
      display_name: "frank",
    });
    assert.throws(() => toRequestUser({ identity: "" } as never), /identity/);
  });
});
