import * as x509 from "@peculiar/x509";
import { createHash, createPrivateKey, createPublicKey, type KeyObject, webcrypto } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** The key that signs registry tokens, the certificate the registry trusts them by, and its key id. */
export interface RegistryKeys {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** PEM, for the registry's `auth.token.rootcertbundle`. */
  certificateFile: string;
  /** The registry's (libtrust) id of the public key: the `kid` header of every token. */
  keyId: string;
}

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

/**
 * Loads the registry token key and certificate from `dir`, creating them on
 * first use (an EC P-256 key and a self-signed certificate valid 10 years).
 * Only the control plane's user may read the key.
 */
export async function loadRegistryKeys(dir: string): Promise<RegistryKeys> {
  const keyFile = join(dir, "token.key");
  const certificateFile = join(dir, "token.crt");
  if (!existsSync(keyFile) || !existsSync(certificateFile)) {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    x509.cryptoProvider.set(webcrypto as unknown as Crypto);
    const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"])) as CryptoKeyPair;
    const now = Date.now();
    const certificate = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(8))).toString("hex"),
      name: "CN=Berth registry tokens",
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + 10 * 365 * 24 * 3600 * 1000),
      signingAlgorithm: ALGORITHM,
      keys,
    });
    const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey));
    await writeFile(keyFile, x509.PemConverter.encode(pkcs8, "PRIVATE KEY"), { mode: 0o600 });
    await writeFile(certificateFile, certificate.toString("pem"), { mode: 0o644 });
  }
  const privateKey = createPrivateKey(await readFile(keyFile, "utf8"));
  const certificate = new x509.X509Certificate(await readFile(certificateFile, "utf8"));
  return {
    privateKey,
    publicKey: createPublicKey(privateKey),
    certificateFile,
    keyId: libtrustKeyId(Buffer.from(certificate.publicKey.rawData)),
  };
}

/**
 * The key id the registry computes for a trusted certificate's key (libtrust's
 * format): the SHA-256 of the DER SubjectPublicKeyInfo, its first 240 bits in
 * base32, in 12 groups of 4 separated by colons.
 */
export function libtrustKeyId(spki: Buffer): string {
  const digest = createHash("sha256").update(spki).digest().subarray(0, 30);
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const byte of digest) bits += byte.toString(2).padStart(8, "0");
  let encoded = "";
  for (let at = 0; at < bits.length; at += 5) encoded += alphabet[Number.parseInt(bits.slice(at, at + 5), 2)];
  return encoded.match(/.{4}/g)!.join(":");
}
