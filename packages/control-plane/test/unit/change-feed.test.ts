// The change feed's contract: in one process, and between processes through
// a NOTIFY transport (an in-memory one always; PostgreSQL's own when
// DATABASE_URL is set).
import type { NotifyHandlers } from "@berth/service-kit";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, test } from "node:test";
import {
  type ChangeFeed,
  type ChangeTopics,
  InProcessChangeFeed,
  recheckMs,
  type RevisionEvent,
  wakeups,
} from "../../src/services/change-feed.js";
import { type NotifyTransport, PostgresChangeFeed } from "../../src/services/postgres-change-feed.js";
import { freshSchema, skipWithoutPostgres } from "./storage-contract/postgres-schema.js";

const LONG_MS = 60_000;

const created: RevisionEvent = {
  kind: "created",
  cause: "create",
  deployment: { id: "d-1", name: "agent" },
  revision: { id: "r-1", number: 1 },
  status: "QUEUED",
  message: "Waiting for a listener",
};

/** The next change of `topic` the feed tells. */
function nextChange<T extends keyof ChangeTopics>(feed: ChangeFeed, topic: T): Promise<ChangeTopics[T]> {
  return new Promise((resolve) => {
    const stop = feed.subscribe(topic, (change) => {
      stop();
      resolve(change);
    });
  });
}

/** Every process on one in-memory channel, as NOTIFY does: each hears every payload, its own included. */
class MemoryChannel {
  private readonly bus = new EventEmitter();
  transport(): NotifyTransport & { lose(): void } {
    let handlers: NotifyHandlers | undefined;
    const receive = (payload: string) => handlers?.receive(payload);
    return {
      start: async (given) => {
        handlers = given;
        this.bus.on("payload", receive);
      },
      send: (payload) => this.bus.emit("payload", payload),
      close: async () => void this.bus.off("payload", receive),
      lose: () => handlers?.lost(),
    };
  }
  /** What a stranger on the database may send. */
  inject(payload: string): void {
    this.bus.emit("payload", payload);
  }
}

describe("InProcessChangeFeed", () => {
  test("a subscriber hears the changes of its topic only, until it stops", () => {
    const feed = new InProcessChangeFeed();
    const heard: string[] = [];
    const stop = feed.subscribe("logs", (change) => heard.push(`logs ${change.deployment_id}`));
    feed.subscribe("deployment", (change) => heard.push(`deployment ${change.change}`));
    feed.publish("logs", { deployment_id: "d-1" });
    feed.publish("deployment", { change: "created", deployment_id: "d-1" });
    stop();
    feed.publish("logs", { deployment_id: "d-2" });
    assert.deepEqual(heard, ["logs d-1", "deployment created"]);
  });

  test("a subscriber that throws neither fails the publisher nor keeps the change from the others", () => {
    const feed = new InProcessChangeFeed();
    const heard: RevisionEvent[] = [];
    feed.subscribe("revision", () => {
      throw new Error("a broken terminal");
    });
    feed.subscribe("revision", (event) => heard.push(event));
    feed.publish("revision", created);
    assert.deepEqual(heard, [created]);
  });

  test("a feed that hears only this process has followers read again as often as they asked", () => {
    assert.equal(recheckMs(new InProcessChangeFeed(), 250), 250);
  });
});

describe("wakeups", () => {
  test("a matching change while the follower reads ends its next wait at once; others do not", async () => {
    const feed = new InProcessChangeFeed();
    const follower = wakeups(feed, { logs: (change) => change.deployment_id === "d-1" });
    feed.publish("logs", { deployment_id: "d-2" });
    feed.publish("logs", { deployment_id: "d-1" });
    await follower.next(LONG_MS);
    const waiting = follower.next(LONG_MS);
    feed.publish("revision", { ...created, deployment: { id: "d-1", name: "agent" } });
    feed.publish("logs", { deployment_id: "d-1" });
    await waiting;
    follower.close();
  });

  test("an abort ends the wait; close ends it too and stops following", async () => {
    const feed = new InProcessChangeFeed();
    const abort = new AbortController();
    const follower = wakeups(feed, { revision: () => true }, abort.signal);
    const waiting = follower.next(LONG_MS);
    abort.abort();
    await waiting;
    const second = wakeups(feed, { revision: () => true });
    const closed = second.next(LONG_MS);
    second.close();
    await closed;
  });
});

describe("PostgresChangeFeed over a NOTIFY transport", () => {
  test("a change published in one process is told there once, and in the other", async () => {
    const channel = new MemoryChannel();
    const [one, two] = await Promise.all([
      PostgresChangeFeed.open(channel.transport()),
      PostgresChangeFeed.open(channel.transport()),
    ]);
    assert.equal(one.hearsOtherProcesses, true);
    assert.ok(recheckMs(one, 250) > 250, "followers lean on the feed, not on reading again");
    const inOne: RevisionEvent[] = [];
    one.subscribe("revision", (event) => inOne.push(event));
    const inTwo = nextChange(two, "revision");
    one.publish("revision", created);
    assert.deepEqual(await inTwo, created);
    assert.deepEqual(inOne, [created], "its own payload coming back is not told again");
    await Promise.all([one.close(), two.close()]);
  });

  test("a revision's long message crosses cut; the process that made it tells it whole", async () => {
    const channel = new MemoryChannel();
    const [one, two] = await Promise.all([
      PostgresChangeFeed.open(channel.transport()),
      PostgresChangeFeed.open(channel.transport()),
    ]);
    const long = { ...created, message: "x".repeat(50_000) };
    const inOne = nextChange(one, "revision");
    const inTwo = nextChange(two, "revision");
    one.publish("revision", long);
    assert.equal((await inOne).message.length, 50_000);
    assert.equal((await inTwo).message.length, 1000);
    await Promise.all([one.close(), two.close()]);
  });

  test("malformed payloads are dropped: not JSON, unknown topic, wrong shape, bad status", async () => {
    const channel = new MemoryChannel();
    const feed = await PostgresChangeFeed.open(channel.transport());
    const heard: unknown[] = [];
    for (const topic of ["deployment", "revision", "logs"] as const) feed.subscribe(topic, (change) => heard.push(change));
    const origin = "someone-else";
    for (const payload of [
      "not json",
      "null",
      JSON.stringify({ origin, message: { topic: "secrets", change: { deployment_id: "d-1" } } }),
      JSON.stringify({ origin, message: { topic: "logs", change: { deployment_id: 42 } } }),
      JSON.stringify({ origin, message: { topic: "logs", change: { deployment_id: "" } } }),
      JSON.stringify({ origin, message: { topic: "deployment", change: { change: "exploded", deployment_id: "d-1" } } }),
      JSON.stringify({ origin, message: { topic: "revision", change: { ...created, status: "PWNED" } } }),
      JSON.stringify({ message: { topic: "logs", change: { deployment_id: "d-1" } } }),
    ])
      channel.inject(payload);
    assert.deepEqual(heard, []);
    channel.inject(JSON.stringify({ origin, message: { topic: "logs", change: { deployment_id: "d-1" } } }));
    assert.deepEqual(heard, [{ deployment_id: "d-1" }], "a well-formed one is told");
    await feed.close();
  });

  test("a lost connection is survived: later changes are still told", async () => {
    const channel = new MemoryChannel();
    const transport = channel.transport();
    const [one, two] = await Promise.all([PostgresChangeFeed.open(transport), PostgresChangeFeed.open(channel.transport())]);
    transport.lose();
    const heard = nextChange(one, "logs");
    two.publish("logs", { deployment_id: "d-1" });
    assert.deepEqual(await heard, { deployment_id: "d-1" });
    await Promise.all([one.close(), two.close()]);
  });
});

describe("PostgresChangeFeed on PostgreSQL", () => {
  test("two processes' feeds on one schema hear each other; a feed on another schema does not", {
    skip: skipWithoutPostgres("the change feed over PostgreSQL NOTIFY"),
    timeout: LONG_MS,
  }, async () => {
    const [shared, other] = await Promise.all([freshSchema(), freshSchema()]);
    const feeds = await Promise.all([
      PostgresChangeFeed.connect(shared.url),
      PostgresChangeFeed.connect(shared.url),
      PostgresChangeFeed.connect(other.url),
    ]);
    const [one, two, elsewhere] = feeds;
    try {
      const strays: unknown[] = [];
      elsewhere!.subscribe("deployment", (change) => strays.push(change));
      const heard = nextChange(two!, "deployment");
      one!.publish("deployment", { change: "updated", deployment_id: "d-1" });
      assert.deepEqual(await heard, { change: "updated", deployment_id: "d-1" });
      // A round trip on the other schema's channel after the publish: had the stray been sent there, it came first.
      const back = nextChange(elsewhere!, "logs");
      const probe = await PostgresChangeFeed.connect(other.url);
      probe.publish("logs", { deployment_id: "probe" });
      await back;
      await probe.close();
      assert.deepEqual(strays, []);
    } finally {
      await Promise.all(feeds.map((feed) => feed.close()));
      await Promise.all([shared.drop(), other.drop()]);
    }
  });
});
