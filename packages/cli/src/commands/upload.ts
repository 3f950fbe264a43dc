const CHUNK_BYTES = 256 * 1024;

function megabytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}

/**
 * PUTs a tarball to a signed upload URL (no API key: the signature is the
 * authorization). On a terminal, one line on stderr shows how much went out.
 */
export async function uploadTarball(uploadUrl: string, tarball: Buffer): Promise<void> {
  const progress = process.stderr.isTTY === true;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= tarball.length) {
        if (progress) process.stderr.write(`\ruploaded ${megabytes(tarball.length)} MB${" ".repeat(20)}\n`);
        controller.close();
        return;
      }
      const chunk = tarball.subarray(sent, sent + CHUNK_BYTES);
      sent += chunk.length;
      if (progress) {
        const percent = Math.floor((sent / tarball.length) * 100);
        process.stderr.write(`\ruploading ${megabytes(sent)} / ${megabytes(tarball.length)} MB (${percent}%)`);
      }
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
  const response = await fetch(uploadUrl, init);
  if (!response.ok) throw new Error(`the upload answered ${response.status}: ${await response.text()}`);
}
