// The bottom inspection layer: asks the registry. For each pull source (mirrors first, per the registry
// policy) it tries each credential the keyring matches for that source, kubelet-style (no anonymous fallback
// once credentials match), reads the manifest and, for a single manifest, its config blob. Not cached: wrap
// it in CachingInspector. Owns its DistributionClient unless one is passed in; call close() when done.
import { DistributionClient, type DistributionClientOptions } from './distribution-client.js';
import { isAnonymousCredential, type RegistryCredential } from './docker-config.js';
import { RegistryError } from './errors.js';
import type { RedirectPolicy } from './redirect-policy.js';
import type { ImageInspection, ImageInspector, InspectOptions } from './inspector.js';
import { Keyring } from './keyring.js';
import {
  emptyRegistryPolicy,
  isInsecureHost,
  pullSources,
  type PullSource,
  type RegistryPolicy,
} from './mirrors.js';
import {
  allArchitectures,
  architecturesOf,
  configDescriptorOf,
  factsOfConfig,
  platformsOfIndex,
} from './platforms.js';
import { formatReference, manifestReference, parseImageReference, type ImageReference } from './reference.js';

export interface RegistryInspectorOptions extends DistributionClientOptions {
  /** Client to use (shared connections, tokens). Default: a new one built from these options, closed by close(). */
  readonly client?: DistributionClient;
  /** Current mirror/insecure/blocked policy; called per inspection so updates apply at once. Default: none. */
  readonly policy?: () => RegistryPolicy;
  /** Largest config blob accepted, in bytes. Default: 8 MiB. */
  readonly maxConfigBytes?: number;
  /**
   * Token realm hosts (`host` or `host:port`) that may receive credentials besides the registry's own host and
   * parent domain, e.g. a separate auth server. Ignored when `client` is given (configure that client instead).
   * Default: none.
   */
  readonly trustedRealmHosts?: readonly string[];
  /**
   * Overrides redirect decisions (see `defaultRedirectVerdict`); ignored when `client` is given. Default: the
   * default policy (https only, no link-local/unspecified targets, loopback/private only from the same class).
   */
  readonly redirectPolicy?: RedirectPolicy;
}

export class RegistryInspector implements ImageInspector {
  private readonly client: DistributionClient;
  private readonly ownsClient: boolean;
  private readonly policy: () => RegistryPolicy;
  private readonly maxConfigBytes: number;

  constructor(options: RegistryInspectorOptions = {}) {
    this.client = options.client ?? new DistributionClient(options);
    this.ownsClient = options.client === undefined;
    this.policy = options.policy ?? (() => emptyRegistryPolicy);
    this.maxConfigBytes = options.maxConfigBytes ?? 8 * 1024 * 1024;
  }

  async inspect(image: string, options: InspectOptions = {}): Promise<ImageInspection> {
    const ref = parseImageReference(image);
    const keyring = options.keyring ?? Keyring.empty;
    const policy = this.policy();
    // Redirect targets may use plain http or unverified TLS only when they are insecure registries themselves.
    const sources = pullSources(ref, policy).map((s) => ({
      ...s,
      isInsecureHost: (host: string) => isInsecureHost(policy, host),
    }));
    const failures: { source: PullSource; error: RegistryError }[] = [];
    for (const source of sources) {
      try {
        return await this.inspectAt(
          ref,
          source,
          keyring.lookup(`${source.registry}/${source.repository}`),
          options.signal,
        );
      } catch (err) {
        if (!(err instanceof RegistryError) || err.code === 'TESSERA_REGISTRY_ABORTED') throw err;
        failures.push({ source, error: err });
      }
    }
    const last = failures[failures.length - 1];
    if (last === undefined)
      throw new RegistryError(
        'TESSERA_REGISTRY_BLOCKED',
        `image ${formatReference(ref)}: nowhere to pull it from`,
      );
    if (failures.length === 1) throw last.error;
    const summary = failures
      .map((f) => `${f.source.registry}/${f.source.repository}: ${f.error.message}`)
      .join('; ');
    throw new RegistryError(
      last.error.code,
      `image ${formatReference(ref)}: every source failed: ${summary}`,
      {
        cause: last.error,
        retryable: failures.some((f) => f.error.retryable),
      },
    );
  }

  private async inspectAt(
    ref: ImageReference,
    source: PullSource,
    credentials: readonly RegistryCredential[],
    signal: AbortSignal | undefined,
  ): Promise<ImageInspection> {
    // An entry without user name and password matched like any other, and is tried anonymously in its turn.
    const attempts: (RegistryCredential | undefined)[] =
      credentials.length > 0
        ? credentials.map((c) => (isAnonymousCredential(c) ? undefined : c))
        : [undefined];
    let lastUnauthorized: RegistryError | undefined;
    for (const credential of attempts) {
      try {
        return await this.inspectWith(ref, source, credential, signal);
      } catch (err) {
        // Like the kubelet, move on to the next matching credential only when this one was refused.
        if (err instanceof RegistryError && err.code === 'TESSERA_REGISTRY_UNAUTHORIZED') {
          lastUnauthorized = err;
          continue;
        }
        throw err;
      }
    }
    if (lastUnauthorized !== undefined && attempts.length > 1) {
      throw new RegistryError(
        'TESSERA_REGISTRY_UNAUTHORIZED',
        `${lastUnauthorized.message} (none of the ${attempts.length} matching credentials was accepted)`,
        { cause: lastUnauthorized },
      );
    }
    throw (
      lastUnauthorized ??
      new RegistryError('TESSERA_REGISTRY_UNAUTHORIZED', `image ${formatReference(ref)}: not authorized`)
    );
  }

  private async inspectWith(
    ref: ImageReference,
    source: PullSource,
    credential: RegistryCredential | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ImageInspection> {
    const what = formatReference(ref);
    const manifest = await this.client.getManifest(source, manifestReference(ref), credential, signal);
    const common = {
      reference: what,
      digest: manifest.digest,
      mediaType: manifest.mediaType,
      source: `${source.registry}/${source.repository}`,
    };
    if (manifest.kind === 'index') {
      const platforms = platformsOfIndex(manifest.json, what);
      return {
        ...common,
        kind: 'index',
        platforms,
        architectures: architecturesOf(platforms),
        operatorBundle: false,
      };
    }
    const config = configDescriptorOf(manifest.json, what);
    if (config.size > this.maxConfigBytes) {
      throw new RegistryError(
        'TESSERA_REGISTRY_TOO_LARGE',
        `${what}: the image config is ${config.size} bytes, above the ${this.maxConfigBytes}-byte limit`,
      );
    }
    const blob = await this.client.getBlob(source, config.digest, credential, this.maxConfigBytes, signal);
    let configJson: unknown;
    try {
      configJson = JSON.parse(blob.toString('utf8'));
    } catch (err) {
      throw new RegistryError(
        'TESSERA_REGISTRY_BAD_RESPONSE',
        `${what}: the image config is not valid JSON`,
        { cause: err },
      );
    }
    const facts = factsOfConfig(configJson, what);
    const platforms =
      facts.architecture === ''
        ? []
        : [
            {
              os: facts.os,
              architecture: facts.architecture,
              variant: facts.variant,
              digest: manifest.digest,
            },
          ];
    return {
      ...common,
      kind: 'manifest',
      platforms,
      architectures: facts.operatorBundle ? [...allArchitectures] : architecturesOf(platforms),
      operatorBundle: facts.operatorBundle,
    };
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.client.close();
  }
}
