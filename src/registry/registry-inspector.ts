// The bottom inspection layer: asks the registry. A short name (no registry) becomes the candidates the node's
// runtime would pull (short-names.ts), tried in order. A reference the nodes' image policy refuses is not inspected
// (image-admission.ts: no request). For each pull source (mirrors first, per the registry policy) it tries each
// credential the keyring matches for that source, kubelet-style (no anonymous fallback once credentials match),
// reads the manifest and, for a single manifest, its config blob; an index is probed for an operator bundle as
// bundleProbeTarget says, the answer remembered per manifest digest. Not cached: wrap it in CachingInspector. Owns its DistributionClient unless one is passed in; call close() when done.
// Documents are reduced to the fields the placement needs as soon as they are parsed (the platforms of an index,
// the config descriptor of a manifest, the platform facts of a config), so no parsed document is held while
// another request is awaited.
import { LRUCache } from 'lru-cache';
import { KeyedConcurrencyLimit } from './concurrency-limit.js';
import { DistributionClient, type DistributionClientOptions } from './distribution-client.js';
import { isAnonymousCredential, type RegistryCredential } from './docker-config.js';
import { assertAdmitted } from './image-admission.js';
import { InvalidArgumentError } from '../runtime/light.js';
import { isAbort, RegistryError } from './errors.js';
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
  bundleProbeTarget,
  configDescriptorOf,
  defaultMaxIndexEntries,
  factsOfConfig,
  readIndex,
  type ConfigFacts,
  type ImagePlatform,
  type SkippedEntries,
} from './platforms.js';
import { formatReference, manifestReference, type ImageReference } from './reference.js';
import { parseRegistryJson, registryJsonBudgets, type RegistryJsonBudgets } from './registry-json.js';
import { candidateAbsent, noCandidateError, resolveShortName, type CandidateAbsence } from './short-names.js';

/** What an inspection keeps of a manifest it read: its identity and the fields the placement needs. */
type ManifestSummary = { readonly mediaType: string; readonly digest: string } & (
  | { readonly kind: 'index'; readonly platforms: ImagePlatform[]; readonly skipped: SkippedEntries }
  | { readonly kind: 'manifest'; readonly config: ConfigDescriptor }
);

/** The config blob a single manifest points at. */
interface ConfigDescriptor {
  readonly digest: string;
  readonly size: number;
}

/** Registry inspections running at once across all callers (RegistryInspectorOptions.maxConcurrentInspections). */
export const DEFAULT_MAX_CONCURRENT_INSPECTIONS = 32;
/** Registry inspections running at once per caller, i.e. per pod (maxConcurrentInspectionsPerCaller). */
export const DEFAULT_MAX_CONCURRENT_INSPECTIONS_PER_CALLER = 4;

export interface RegistryInspectorOptions extends DistributionClientOptions {
  /** Client to use (shared connections, tokens). Default: a new one built from these options, closed by close(). */
  readonly client?: DistributionClient;
  /** Current mirror/insecure/blocked policy; called per inspection so updates apply at once. Default: none. */
  readonly policy?: () => RegistryPolicy;
  /** Largest config blob accepted, in bytes. Default: 8 MiB. */
  readonly maxConfigBytes?: number;
  /**
   * Read the runnable manifest of a single-platform index (and its config) to recognise an operator bundle
   * published as an index, as MTO does: two more requests for such an index, once per manifest digest (and of an
   * index of several platforms when the caller asks, InspectOptions.probeOperatorBundle). False: never. Default: true.
   */
  readonly probeIndexForBundle?: boolean;
  /**
   * Estimated bytes of the per-digest memory of bundle probes (a manifest's digest -> whether it is a bundle);
   * least recently used answers are forgotten first. Default: 1 MiB (some 4,000 digests).
   */
  readonly maxBundleVerdictBytes?: number;
  /** Most entries an index may list; larger ones fail with TESSERA_REGISTRY_TOO_LARGE. Default: 1000. */
  readonly maxIndexEntries?: number;
  /**
   * Registry inspections running at once across all callers (cache hits take no slot); bounds the manifests held
   * in memory. Default: 32.
   */
  readonly maxConcurrentInspections?: number;
  /**
   * Registry inspections running at once per caller (InspectOptions.concurrencyGroup, by default the keyring
   * object: one per pod), so one pod with many images cannot take every slot. Default: 4.
   */
  readonly maxConcurrentInspectionsPerCaller?: number;
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
  private readonly maxIndexEntries: number;
  private readonly probeIndexForBundle: boolean;
  /**
   * Whether a manifest (by digest) is an operator bundle, from earlier probes. Content-addressed (the manifest and
   * its config are verified against their digests), so the answer holds for every registry, mirror and credential,
   * and never expires; bounded by bytes.
   */
  private readonly bundleVerdicts: LRUCache<string, boolean>;
  private readonly jsonBudgets: RegistryJsonBudgets;
  private readonly allSlots: KeyedConcurrencyLimit;
  private readonly perCallerLimit: number;
  /** Per-caller slots, keyed by the caller's group object; collected with it. */
  private readonly callerSlots = new WeakMap<object, KeyedConcurrencyLimit>();

  constructor(options: RegistryInspectorOptions = {}) {
    this.client = options.client ?? new DistributionClient(options);
    this.ownsClient = options.client === undefined;
    this.policy = options.policy ?? (() => emptyRegistryPolicy);
    this.maxConfigBytes = options.maxConfigBytes ?? 8 * 1024 * 1024;
    this.maxIndexEntries = options.maxIndexEntries ?? defaultMaxIndexEntries;
    this.probeIndexForBundle = options.probeIndexForBundle ?? true;
    const verdictBytes = options.maxBundleVerdictBytes ?? 1024 * 1024;
    if (!Number.isInteger(verdictBytes) || verdictBytes < 1)
      throw new InvalidArgumentError(
        'maxBundleVerdictBytes',
        `must be a positive integer, not ${verdictBytes}`,
      );
    this.bundleVerdicts = new LRUCache<string, boolean>({
      maxSize: verdictBytes,
      sizeCalculation: (_verdict, digest) => bundleVerdictBytes(digest),
    });
    this.jsonBudgets = registryJsonBudgets(options.jsonBudgets);
    const all = options.maxConcurrentInspections ?? DEFAULT_MAX_CONCURRENT_INSPECTIONS;
    const perCaller =
      options.maxConcurrentInspectionsPerCaller ?? DEFAULT_MAX_CONCURRENT_INSPECTIONS_PER_CALLER;
    for (const [field, value] of [
      ['maxConcurrentInspections', all],
      ['maxConcurrentInspectionsPerCaller', perCaller],
      ['maxIndexEntries', this.maxIndexEntries],
    ] as const) {
      if (!Number.isInteger(value) || value < 1)
        throw new InvalidArgumentError(field, `must be a positive integer, not ${value}`);
    }
    this.allSlots = new KeyedConcurrencyLimit(all);
    this.perCallerLimit = perCaller;
  }

  /** Inspections running now (for tests and metrics). */
  get running(): number {
    return this.allSlots.running('all');
  }

  async inspect(image: string, options: InspectOptions = {}): Promise<ImageInspection> {
    const group =
      options.concurrencyGroup ??
      (options.keyring !== undefined && options.keyring !== Keyring.empty ? options.keyring : undefined);
    let callerSlots = group === undefined ? undefined : this.callerSlots.get(group);
    if (group !== undefined && callerSlots === undefined) {
      callerSlots = new KeyedConcurrencyLimit(this.perCallerLimit);
      this.callerSlots.set(group, callerSlots);
    }
    const run = (): Promise<ImageInspection> =>
      this.allSlots.run('all', () => this.inspectNow(image, options), options.signal);
    try {
      return await (callerSlots === undefined ? run() : callerSlots.run('caller', run, options.signal));
    } catch (err) {
      if (err instanceof RegistryError || options.signal?.aborted !== true) throw err;
      // Cancelled while waiting for a slot.
      throw new RegistryError('TESSERA_REGISTRY_ABORTED', `image ${image}: cancelled`, { cause: err });
    }
  }

  private async inspectNow(image: string, options: InspectOptions): Promise<ImageInspection> {
    const keyring = options.keyring ?? Keyring.empty;
    const policy = this.policy();
    const { rule, candidates } = resolveShortName(image, policy.searchRegistries ?? []);
    if (rule !== 'search-registries') {
      const [ref] = candidates as [ImageReference];
      const inspection = await this.inspectReference(ref, policy, keyring, options);
      if (rule === 'qualified') return inspection;
      return {
        ...inspection,
        shortName: {
          name: image,
          rule,
          candidates: [{ reference: inspection.reference, outcome: 'chosen' }],
        },
      };
    }
    // As CRI-O: the candidates in order, one inspection each, the first that has the image wins. The search goes
    // on only past a candidate that lacks it for good; the list is the administrator's, so a pod cannot lengthen it.
    // Each candidate gets the credentials its own registry matches (the kubelet matches the Docker-normalised name
    // and CRI-O sends that match to every candidate; a credential is never sent to a registry it does not name).
    const tried: { reference: string; outcome: CandidateAbsence }[] = [];
    let lastError: unknown;
    for (const [i, ref] of candidates.entries()) {
      try {
        const inspection = await this.inspectReference(ref, policy, keyring, options);
        const rest = candidates
          .slice(i + 1)
          .map((c) => ({ reference: formatReference(c), outcome: 'not-tried' as const }));
        return {
          ...inspection,
          shortName: {
            name: image,
            rule,
            candidates: [...tried, { reference: inspection.reference, outcome: 'chosen' }, ...rest],
          },
        };
      } catch (err) {
        if (!(err instanceof RegistryError) || err.code === 'TESSERA_REGISTRY_ABORTED') throw err;
        const absent = candidateAbsent(err);
        if (absent === undefined)
          throw new RegistryError(
            err.code,
            `${err.message} (short name ${image}: search registry ${i + 1} of ${candidates.length}; the next ones are not tried while this one may still have it)`,
            { cause: err, retryable: err.retryable },
          );
        tried.push({ reference: formatReference(ref), outcome: absent });
        lastError = err;
      }
    }
    throw noCandidateError(image, tried, lastError);
  }

  /** Inspects one fully qualified reference: its pull sources (mirrors first) in order. */
  private async inspectReference(
    ref: ImageReference,
    policy: RegistryPolicy,
    keyring: Keyring,
    options: InspectOptions,
  ): Promise<ImageInspection> {
    // As CRI-O: the nodes' policy.json judges the reference as the pod names it, before any mirror is chosen.
    assertAdmitted(ref, policy.imageAdmission);
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
          options,
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
    options: InspectOptions,
  ): Promise<ImageInspection> {
    // An entry without user name and password matched like any other, and is tried anonymously in its turn.
    const attempts: (RegistryCredential | undefined)[] =
      credentials.length > 0
        ? credentials.map((c) => (isAnonymousCredential(c) ? undefined : c))
        : [undefined];
    let lastUnauthorized: RegistryError | undefined;
    for (const credential of attempts) {
      try {
        return await this.inspectWith(ref, source, credential, options);
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
    options: InspectOptions,
  ): Promise<ImageInspection> {
    const signal = options.signal;
    const what = formatReference(ref);
    const manifest = await this.readManifest(source, manifestReference(ref), credential, what, signal);
    const common = {
      reference: what,
      digest: manifest.digest,
      mediaType: manifest.mediaType,
      source: `${source.registry}/${source.repository}`,
    };
    if (manifest.kind === 'index') {
      const { platforms, skipped } = manifest;
      // Like MTO: an operator bundle published as an index is recognised by the config of its first runnable
      // manifest, and then counts as every architecture. Which indexes are probed: bundleProbeTarget. A manifest
      // already probed (for any image, registry or credential) costs nothing, probed or not.
      const target = this.probeIndexForBundle
        ? bundleProbeTarget(platforms, options.probeOperatorBundle === true)
        : undefined;
      const known = platforms[0] === undefined ? undefined : this.bundleVerdicts.get(platforms[0].digest);
      const operatorBundle =
        known ??
        (target === undefined ? false : await this.isBundle(source, target.digest, credential, what, signal));
      return {
        ...common,
        kind: 'index',
        platforms,
        architectures: operatorBundle ? [...allArchitectures] : architecturesOf(platforms),
        operatorBundle,
        skippedEntries: skipped,
      };
    }
    const facts = await this.configFacts(manifest.config, source, credential, what, signal);
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

  /**
   * Whether the index entry `digest` is an operator bundle manifest. A failure here (a registry that lists a child
   * it cannot serve) only means "not known to be a bundle": the index's own platforms still stand.
   */
  private async isBundle(
    source: PullSource,
    digest: string,
    credential: RegistryCredential | undefined,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    try {
      const child = await this.readManifest(source, digest, credential, what, signal);
      const bundle =
        child.kind === 'manifest' &&
        (await this.configFacts(child.config, source, credential, what, signal)).operatorBundle;
      // Only an answer is remembered: a failed probe may succeed next time.
      this.bundleVerdicts.set(digest, bundle);
      return bundle;
    } catch (err) {
      if (isAbort(err) || !(err instanceof RegistryError)) throw err;
      return false;
    }
  }

  /**
   * Reads manifest `reference` and keeps only its summary: the parsed document, up to the manifest budget, is
   * dropped when this returns, before the caller awaits anything else (with many inspections in flight, holding
   * each one's document while its config blob downloads would multiply that budget).
   */
  private async readManifest(
    source: PullSource,
    reference: string,
    credential: RegistryCredential | undefined,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<ManifestSummary> {
    const { kind, mediaType, digest, json } = await this.client.getManifest(
      source,
      reference,
      credential,
      signal,
    );
    if (kind === 'index') {
      const { platforms, skipped } = readIndex(json, what, this.maxIndexEntries);
      return { kind, mediaType, digest, platforms, skipped };
    }
    return { kind, mediaType, digest, config: configDescriptorOf(json, what) };
  }

  /** Reads the config blob `config` of a single manifest (size-checked before the request). */
  private async configFacts(
    config: ConfigDescriptor,
    source: PullSource,
    credential: RegistryCredential | undefined,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<ConfigFacts> {
    if (config.size > this.maxConfigBytes) {
      throw new RegistryError(
        'TESSERA_REGISTRY_TOO_LARGE',
        `${what}: the image config is ${config.size} bytes, above the ${this.maxConfigBytes}-byte limit`,
      );
    }
    const blob = await this.client.getBlob(source, config.digest, credential, this.maxConfigBytes, signal);
    // Parsed and reduced to its facts in one synchronous step: the document never outlives this call.
    const document = parseRegistryJson(
      blob,
      this.jsonBudgets.config,
      // The digest as `docker images` shortens it, so the verdict fits the pod's 256-character annotation.
      `${what}: the image config ${config.digest.slice(0, config.digest.indexOf(':') + 13)}`,
      `${what}: the image config is not valid JSON`,
    );
    return factsOfConfig(document, what);
  }

  /**
   * Trusts these CA certificates (on top of Node's roots) from the next registry request on; for the cluster's
   * registry CA bundle, which an admin may change while the operator runs. Applies to the client this inspector
   * uses, also one passed in.
   */
  setCaCertificates(...trust: Parameters<DistributionClient['setCaCertificates']>): void {
    this.client.setCaCertificates(...trust);
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.client.close();
  }
}

/** Estimated heap bytes of one remembered bundle verdict: the digest (UTF-16) and the LRU's bookkeeping. */
export function bundleVerdictBytes(digest: string): number {
  return 128 + digest.length * 2;
}
