const ENTER = new Set(["\r", "\n", "\u0004"]);
const CTRL_C = "\u0003";
const ERASE = new Set(["\u007f", "\b"]);

/**
 * A secret from stdin: typed at a prompt that echoes nothing when stdin is a
 * terminal, else the first line of what was piped in (`echo $KEY | berth login`).
 */
export async function readSecretLine(prompt: string): Promise<string> {
  return process.stdin.isTTY ? promptHidden(prompt) : firstPipedLine();
}

async function firstPipedLine(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes("\n")) break;
  }
  return (text.split("\n")[0] ?? "").trim();
}

function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  return new Promise((resolve, reject) => {
    let typed = "";
    const finish = (error?: Error) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      if (error) reject(error);
      else resolve(typed.trim());
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (ENTER.has(char)) return finish();
        if (char === CTRL_C) return finish(new Error("cancelled"));
        typed = ERASE.has(char) ? typed.slice(0, -1) : typed + char;
      }
    };
    stdin.on("data", onData);
  });
}
