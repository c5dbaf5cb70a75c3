// Serving certificate for the webhook: either generated in memory for development, or read from cert/key files and
// re-read whenever they change (cert-manager or kubelet secret updates swap files in place). A changed pair is
// validated before use; a broken pair is logged and the previous one stays in service.
import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import type { Clock, Timer } from '../clock.js';
import { RuntimeError, errorMessage } from '../errors.js';
import type { Logger } from '../logging.js';

export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export class CertificateError extends RuntimeError {
  constructor(message: string, cause?: unknown) {
    super('TESSERA_CERTIFICATE', message, { cause });
  }
}

/** Checks that `pair` is a usable certificate/key pair; throws CertificateError otherwise. */
export function validateKeyPair(pair: KeyPair): void {
  try {
    tls.createSecureContext({ cert: pair.certPem, key: pair.keyPem });
  } catch (err) {
    throw new CertificateError(`certificate/key pair is unusable: ${errorMessage(err)}`, err);
  }
}

export interface FileCertificateOptions {
  certFile: string;
  keyFile: string;
  /** How often the files are checked (ms), besides file-system notifications. Default: 10,000. */
  pollIntervalMs?: number;
  clock: Clock;
  logger: Logger;
}

/** Watches a cert/key file pair; calls `onChange` with each new valid pair. */
export class FileCertificateWatcher {
  private fingerprint = '';
  private latestPair: KeyPair | undefined;
  private timer: Timer | undefined;
  private watcher: FSWatcher | undefined;
  private stopped = false;
  private checking: Promise<void> = Promise.resolve();

  constructor(
    private readonly options: FileCertificateOptions,
    private readonly onChange: (pair: KeyPair) => void,
  ) {}

  /** Reads the pair once (throwing CertificateError if unusable) and starts watching. */
  async start(): Promise<KeyPair> {
    const pair = await this.read();
    validateKeyPair(pair);
    this.fingerprint = pair.certPem + pair.keyPem;
    this.latestPair = pair;
    this.watch();
    return pair;
  }

  /**
   * The newest valid pair read so far. A server created after startOrWait() resolved uses it: files that appeared
   * meanwhile were announced to `onChange` before that server existed.
   */
  latest(): KeyPair | undefined {
    return this.latestPair;
  }

  /**
   * Like start(), but files that do not exist yet are no error: returns undefined and keeps watching, calling
   * `onChange` once a valid pair appears. For an optional Secret volume, which the kubelet fills only once the Secret
   * exists (OpenShift's service CA creates it; other clusters may never do). Files that exist but are unusable still
   * throw: that is a broken Secret, not a missing one; so does a folder that does not exist (the kubelet creates an
   * optional volume's folder even without its Secret, so a missing one is a wrong flag).
   */
  async startOrWait(): Promise<KeyPair | undefined> {
    const dir = path.dirname(this.options.certFile);
    try {
      await stat(dir);
    } catch (err) {
      throw new CertificateError(`cannot read the certificate folder ${dir}: ${errorMessage(err)}`, err);
    }
    try {
      await Promise.all([stat(this.options.certFile), stat(this.options.keyFile)]);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new CertificateError(errorMessage(err), err);
      this.watch();
      return undefined;
    }
    return this.start();
  }

  private watch(): void {
    try {
      // Fire and forget, like the timer: reload() logs a failed read or a broken pair and keeps the current one.
      this.watcher = watch(path.dirname(this.options.certFile), () => void this.check());
      this.watcher.on('error', () => undefined);
    } catch {
      // Polling alone still works.
    }
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.watcher?.close();
  }

  /** Re-reads the files now (also called by the timer and file notifications). */
  check(): Promise<void> {
    this.checking = this.checking.then(() => this.reload());
    return this.checking;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimer(() => {
      void this.check().finally(() => this.schedule());
    }, this.options.pollIntervalMs ?? 10_000);
  }

  private async reload(): Promise<void> {
    if (this.stopped) return;
    let pair: KeyPair;
    try {
      pair = await this.read();
    } catch (err) {
      // Still waiting for files that never existed (startOrWait) is the expected state, not news every poll.
      if (this.fingerprint === '') return;
      this.options.logger.warn(
        { err: errorMessage(err) },
        'cannot read certificate files; keeping the current ones',
      );
      return;
    }
    const fingerprint = pair.certPem + pair.keyPem;
    if (fingerprint === this.fingerprint) return;
    try {
      validateKeyPair(pair);
    } catch (err) {
      // Files are often written one after the other: a cert without its new key is expected briefly.
      this.options.logger.warn(
        { err: errorMessage(err) },
        'new certificate files are not a valid pair (yet); keeping the current ones',
      );
      return;
    }
    this.fingerprint = fingerprint;
    this.latestPair = pair;
    this.onChange(pair);
    this.options.logger.info({ certFile: this.options.certFile }, 'serving certificate loaded from files');
  }

  private async read(): Promise<KeyPair> {
    const { certFile, keyFile } = this.options;
    try {
      await Promise.all([stat(certFile), stat(keyFile)]);
      const [certPem, keyPem] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
      return { certPem, keyPem };
    } catch (err) {
      throw new CertificateError(`cannot read ${certFile} / ${keyFile}: ${errorMessage(err)}`, err);
    }
  }
}
