import cliProgress from "cli-progress";

const CHUNK_BYTES = 256 * 1024;

const MEGABYTE = 1024 * 1024;

/** A size to read at a glance: in KB under a megabyte (a small project is not "0.0 MB"), else in MB. */
function sizeText(bytes: number): string {
  return bytes < MEGABYTE ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / MEGABYTE).toFixed(1)} MB`;
}

interface Progress {
  sent(bytes: number): void;
  done(succeeded: boolean): void;
}

/** On a terminal, a bar redrawn in place; in a log (CI), the total once the upload is done. */
function progressReporter(total: number): Progress {
  if (process.stderr.isTTY !== true) {
    return {
      sent() {},
      done(succeeded) {
        if (succeeded) process.stderr.write(`uploaded ${sizeText(total)}\n`);
      },
    };
  }
  const bar = new cliProgress.SingleBar(
    { format: "uploading {bar} {percentage}% | {sent} / {size}", stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { sent: sizeText(0), size: sizeText(total) });
  return {
    sent: (bytes: number) => bar.update(bytes, { sent: sizeText(bytes) }),
    done: () => bar.stop(),
  };
}

/**
 * PUTs a tarball to a signed upload URL (no API key: the signature is the
 * authorization), showing how much went out on stderr when `report`.
 */
export async function uploadTarball(uploadUrl: string, tarball: Buffer, report: boolean): Promise<void> {
  const progress = report ? progressReporter(tarball.length) : undefined;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= tarball.length) {
        controller.close();
        return;
      }
      const chunk = tarball.subarray(sent, sent + CHUNK_BYTES);
      sent += chunk.length;
      progress?.sent(sent);
      controller.enqueue(new Uint8Array(chunk));
    },
  });
  // A streamed request body (it reports progress) needs half duplex in Node's fetch, which its DOM types do not name.
  const init: RequestInit & { duplex: "half" } = {
    method: "PUT",
    body,
    headers: { "content-type": "application/gzip" },
    duplex: "half",
  };
  let response: Response | undefined;
  try {
    response = await fetch(uploadUrl, init);
  } finally {
    progress?.done(response?.ok === true);
  }
  if (!response.ok) throw new Error(`the upload answered ${response.status}: ${await response.text()}`);
}
