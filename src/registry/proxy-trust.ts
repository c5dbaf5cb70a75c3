// The cluster's trusted CA bundle (OpenShift injects it, the system roots plus the cluster proxy's trustedCA, into
// a ConfigMap labelled config.openshift.io/inject-trusted-cabundle=true, key ca-bundle.crt, which the operator
// mounts): trusted for an https:// proxy and for every registry, as the nodes trust it for pulls. Read at start;
// a missing or empty file means nothing was injected (plain Kubernetes, or not yet): Node's roots only.
import { readFile, stat } from 'node:fs/promises';
import { InvalidArgumentError } from '../runtime/light.js';

/** Largest accepted bundle, in bytes (the injected bundle, all system roots included, is about 200 KiB). */
export const maxTrustedCaBundleBytes = 4 * 1024 * 1024;

/**
 * The PEM of the bundle at `file`, or undefined when the file is absent or empty. Throws InvalidArgumentError
 * naming `flag` for a file too large to be a CA bundle or one without a certificate.
 */
export async function readTrustedCaBundle(file: string, flag: string): Promise<string | undefined> {
  const unreadable = (err: unknown): InvalidArgumentError =>
    new InvalidArgumentError(
      flag,
      `cannot read ${file} (${err instanceof Error ? err.message : String(err)})`,
    );
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unreadable(err);
  }
  if (size > maxTrustedCaBundleBytes)
    throw new InvalidArgumentError(
      flag,
      `${file} has ${size} bytes, more than the ${maxTrustedCaBundleBytes} a CA bundle may have`,
    );
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (err) {
    throw unreadable(err);
  }
  if (pem.trim() === '') return undefined;
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new InvalidArgumentError(flag, `${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return pem;
}
