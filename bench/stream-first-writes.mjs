// Preloaded into the server by streams.mjs (`node --import`): for each connection, the ms from the server accepting it to
// its first write carrying a run's event (an SSE `data:` frame, or a WebSocket message of `"type":"event"`), appended to
// the file BENCH_FIRST_WRITES_FILE (one number a line, flushed every 250 ms and at exit). The server's own share of a
// subscriber's time to first event: what the load processes measure adds their own queueing (on a 2-core machine they
// share the cores with the server) and the kernel's.
import { appendFileSync } from "node:fs";
import net from "node:net";

const file = process.env.BENCH_FIRST_WRITES_FILE;
if (file) {
  const acceptedAt = Symbol("acceptedAt");
  const pending = [];
  const flush = () => {
    if (pending.length > 0) appendFileSync(file, `${pending.splice(0).join("\n")}\n`);
  };
  setInterval(flush, 250).unref();
  process.on("exit", flush);
  const emit = net.Server.prototype.emit;
  net.Server.prototype.emit = function (event, socket, ...rest) {
    if (event === "connection") socket[acceptedAt] = performance.now();
    return emit.call(this, event, socket, ...rest);
  };
  const write = net.Socket.prototype.write;
  net.Socket.prototype.write = function (chunk, ...rest) {
    const at = this[acceptedAt];
    if (at !== undefined && chunk && typeof chunk !== "function") {
      const text = typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      if (text.includes("data:") || text.includes('"type":"event"')) {
        this[acceptedAt] = undefined;
        pending.push((performance.now() - at).toFixed(2));
      }
    }
    return write.call(this, chunk, ...rest);
  };
}
