import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, it } from "node:test";
import { readPushWebhook } from "../../src/domain/push-webhooks.js";

const SECRET = "shared-secret-of-the-hook";
const body = (payload: object) => Buffer.from(JSON.stringify(payload));
const hmac = (data: Buffer) => createHmac("sha256", SECRET).update(data).digest("hex");
const HEAD = "a".repeat(40);

describe("push webhooks as hosts send them", () => {
  it("GitHub: X-Hub-Signature-256 over the body, the delivery id, ref, head and repository URLs", () => {
    const data = body({
      ref: "refs/heads/main",
      after: HEAD,
      repository: { clone_url: "https://h/o/r.git", html_url: "https://h/o/r" },
    });
    const push = readPushWebhook(
      "github",
      { "x-github-event": "push", "x-github-delivery": "d-1", "x-hub-signature-256": `sha256=${hmac(data)}` },
      data,
      SECRET,
    );
    assert.deepEqual(push, {
      kind: "push",
      deliveryId: "d-1",
      ref: "refs/heads/main",
      after: HEAD,
      repositoryUrls: ["https://h/o/r.git", "https://h/o/r"],
    });
    assert.throws(
      () =>
        readPushWebhook("github", { "x-github-event": "push", "x-hub-signature-256": `sha256=${"0".repeat(64)}` }, data, SECRET),
      /signature does not match/,
    );
    assert.throws(() => readPushWebhook("git", { "x-github-event": "push" }, data, SECRET), /not signed/);
    // A body changed after signing no longer matches.
    const tampered = body({ ref: "refs/heads/main", after: "b".repeat(40) });
    assert.throws(
      () =>
        readPushWebhook("github", { "x-github-event": "push", "x-hub-signature-256": `sha256=${hmac(data)}` }, tampered, SECRET),
      /signature/,
    );
  });

  it("Gitea and Forgejo: a hex signature without prefix in their own headers", () => {
    const data = body({ ref: "refs/heads/dev", after: HEAD, repository: { clone_url: "https://gitea/o/r.git" } });
    for (const prefix of ["gitea", "forgejo"]) {
      const push = readPushWebhook(
        "gitea",
        { [`x-${prefix}-event`]: "push", [`x-${prefix}-delivery`]: `${prefix}-1`, [`x-${prefix}-signature`]: hmac(data) },
        data,
        SECRET,
      );
      assert.equal(push.kind, "push");
      assert.equal(push.deliveryId, `${prefix}-1`);
    }
    assert.throws(
      () => readPushWebhook("gitea", { "x-gitea-event": "push", "x-gitea-signature": "0".repeat(64) }, data, SECRET),
      /signature/,
    );
  });

  it("GitLab: the secret itself in X-Gitlab-Token, Push Hook events, the project's URLs", () => {
    const data = body({
      ref: "refs/heads/main",
      after: HEAD,
      project: { git_http_url: "https://gl/g/r.git", git_ssh_url: "git@gl:g/r.git" },
    });
    const push = readPushWebhook(
      "gitlab",
      { "x-gitlab-event": "Push Hook", "x-gitlab-token": SECRET, "x-gitlab-event-uuid": "u-1" },
      data,
      SECRET,
    );
    assert.deepEqual(push, {
      kind: "push",
      deliveryId: "u-1",
      ref: "refs/heads/main",
      after: HEAD,
      repositoryUrls: ["https://gl/g/r.git", "git@gl:g/r.git"],
    });
    assert.throws(
      () => readPushWebhook("gitlab", { "x-gitlab-event": "Push Hook", "x-gitlab-token": "wrong" }, data, SECRET),
      /Token/,
    );
    const tag = readPushWebhook("gitlab", { "x-gitlab-event": "Tag Push Hook", "x-gitlab-token": SECRET }, data, SECRET);
    assert.equal(tag.kind, "other");
  });

  it("pings, branch deletions and pushes without a head are acknowledged as other events", () => {
    const signed = (payload: object, event: string) => {
      const data = body(payload);
      return readPushWebhook("github", { "x-github-event": event, "x-hub-signature-256": `sha256=${hmac(data)}` }, data, SECRET);
    };
    assert.equal(signed({ zen: "hi" }, "ping").kind, "other");
    assert.equal(signed({ ref: "refs/heads/old", after: "0".repeat(40) }, "push").kind, "other");
    assert.equal(signed({ ref: "refs/heads/main" }, "push").kind, "other");
  });
});
