import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

/**
 * The handlers bench/auth.mjs measures. `header`: authentication only, the identity is the `x-bench-user` header (as
 * cheap as a handler gets, so what is measured is the server's cost of calling one). `owner`: the same plus a `*`
 * resource handler, the usual per-user scoping: it stamps `metadata.owner` on what is written and returns an owner
 * filter, so every read and search goes through the scoped query.
 */
const identify = async (request) => {
  const identity = request.headers.get("x-bench-user");
  if (!identity) throw new HTTPException(401, { message: "Missing x-bench-user" });
  return identity;
};

export const header = new Auth().authenticate(identify);

export const owner = new Auth().authenticate(identify).on("*", ({ value, user }) => {
  if (value && typeof value === "object" && "metadata" in value) {
    value.metadata ??= {};
    value.metadata.owner = user.identity;
  }
  return { owner: user.identity };
});
