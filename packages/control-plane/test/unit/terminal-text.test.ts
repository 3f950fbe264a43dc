import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, test } from "node:test";
import { REPO_ROOT } from "@berth/test-support";
import { terminalJson, terminalText } from "@berth/service-kit";

describe("terminalText: what a deployment wrote, safe to print on a terminal", () => {
  test("escape sequences go whole: a title (OSC, ended by BEL or ST), a clear screen, colours, a hyperlink", () => {
    assert.equal(terminalText("a\u001b]0;pwned by a tenant\u0007\u001b[2Jb"), "ab");
    assert.equal(terminalText("\u001b[1;31mred\u001b[0m"), "red");
    assert.equal(terminalText("\u001b]8;;http://127.0.0.1/\u001b\\link\u001b]8;;\u001b\\"), "link");
    assert.equal(terminalText("c1 \u009b2Jcsi \u009d0;title\u009c"), "c1 csi ");
  });

  test("any other control character is shown as an escape; newlines stay, tabs become spaces", () => {
    assert.equal(terminalText("evil\rgood\b\u0007"), "evil\\x0dgood\\x08\\x07");
    assert.equal(terminalText("an unended \u001b]0;title"), "an unended 0;title");
    assert.equal(terminalText("a lone escape \u001b"), "a lone escape \\x1b");
    assert.equal(terminalText("one\r\ntwo\tthree\u007f"), "one\ntwo  three\\x7f");
    assert.equal(terminalText("abc \u202edcba"), "abc \\u202edcba");
  });

  test("terminalJson: the same JSON, with C1 and bidirectional controls escaped too", () => {
    const value = { message: "\u001b[2J \u009b \u202e é" };
    const text = terminalJson(value);
    assert.equal(text, String.raw`{"message":"\u001b[2J \u009b \u202e é"}`);
    assert.deepEqual(JSON.parse(text), value);
  });

  test("the services' JSON logs: what a deployment wrote keeps no character a terminal acts on", () => {
    const logged = "crashed: \u001b]0;title\u0007 \u009b2J \u202eevil";
    const script = `import("@berth/service-kit").then(({ createServiceLogger }) => createServiceLogger("test").warn(${JSON.stringify(logged)}))`;
    const stdout = execFileSync(process.execPath, ["--import", "tsx", "--conditions=berth-source", "-e", script], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
    for (const control of ["\u001b", "\u0007", "\u009b", "\u202e"]) assert.ok(!stdout.includes(control), stdout);
    assert.equal((JSON.parse(stdout) as { msg: string }).msg, logged);
  });
});
