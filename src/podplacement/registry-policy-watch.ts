// Keeps the registry policy current: recomputes it (clusterRegistryPolicy) from the informers of the policy kinds the
// cluster serves on every add/update/delete, and calls onChange only when the result differs, so the caller purges
// its inspection cache exactly when inspections could now answer differently. current() is always the latest
// policy (empty until the informers deliver). discoverPolicyKinds() asks the API server once which kinds exist.
// TrustedCaWatch keeps the cluster's registry CA certificates (additionalTrustedCA, each bundle for its own host) current:
// by polling the ConfigMap by name (the operator may only `get` it), and soon after the image config changes (a burst
// of changes costs one read in flight and one after it, at most one read per TRUSTED_CA_MIN_READ_INTERVAL_MS).
import {
  ConfigMaps,
  ignoreNotFound,
  resourcePath,
  type Clock,
  type KubeClient,
  type KubeObject,
  type KubeList,
  type Logger,
  type ResourceType,
  type Runnable,
} from '../runtime/index.js';
import { sameHostCaCertificates, type HostCaCertificates, type RegistryPolicy } from '../registry/index.js';
import {
  ADDITIONAL_TRUSTED_CA_NAMESPACE,
  IMAGE_CONFIG_NAME,
  additionalTrustedCas,
  additionalTrustedCaName,
  ClusterImagePolicies,
  ImageConfigs,
  ImagePolicies,
  ImageContentSourcePolicies,
  ImageDigestMirrorSets,
  ImageTagMirrorSets,
  REGISTRY_POLICY_KINDS,
  clusterRegistryPolicy,
  hostCaCertificatesOf,
  samePolicy,
  servedKinds,
  unenforcedAllowedRegistries,
  type ApiResourceList,
  type ImageConfig,
  type RegistryCaBundle,
  type RegistryPolicyObjects,
  type SignaturePolicy,
} from './registry-policy.js';

/** The part of a shared informer this watch uses. */
export interface PolicyInformer {
  getIndexer(): { list(): KubeObject[] };
  addEventHandler(handler: {
    onAdd?(obj: KubeObject): void;
    onUpdate?(oldObj: KubeObject, newObj: KubeObject): void;
    onDelete?(obj: KubeObject): void;
  }): unknown;
}

export interface RegistryPolicyWatchOptions {
  /** One informer per served policy kind (see discoverPolicyKinds); a kind without one counts as empty. */
  informerFor: (type: ResourceType) => PolicyInformer;
  /** The served policy kinds to follow from the start; more can be followed later (follow()). Default: none. */
  kinds?: readonly ResourceType[];
  /** Added to the cluster's insecure registries (operator flags). Default: none. */
  extraInsecureRegistries?: readonly string[];
  /** Called after the policy changed (not for the first, empty policy). */
  onChange?: (policy: RegistryPolicy) => void;
  logger: Logger;
}

export class RegistryPolicyWatch {
  private policy: RegistryPolicy;
  private readonly informers = new Map<ResourceType, PolicyInformer>();
  private warnedAllowed = '';

  constructor(private readonly o: RegistryPolicyWatchOptions) {
    this.policy = clusterRegistryPolicy(
      {
        imageDigestMirrorSets: [],
        imageTagMirrorSets: [],
        imageContentSourcePolicies: [],
        imageConfigs: [],
      },
      o.extraInsecureRegistries,
    );
    this.follow(o.kinds ?? []);
  }

  /** Follows these policy kinds too (once discovery has said which the cluster serves). */
  follow(kinds: readonly ResourceType[]): void {
    for (const kind of kinds) {
      if (this.informers.has(kind)) continue;
      const informer = this.o.informerFor(kind);
      this.informers.set(kind, informer);
      const recompute = (): void => this.recompute();
      informer.addEventHandler({ onAdd: recompute, onUpdate: recompute, onDelete: recompute });
    }
  }

  /** The policy to apply now; cheap, call it per inspection. */
  current(): RegistryPolicy {
    return this.policy;
  }

  private list(kind: ResourceType): KubeObject[] {
    return this.informers.get(kind)?.getIndexer().list() ?? [];
  }

  private recompute(): void {
    const objects: RegistryPolicyObjects = {
      imageDigestMirrorSets: this.list(ImageDigestMirrorSets),
      imageTagMirrorSets: this.list(ImageTagMirrorSets),
      imageContentSourcePolicies: this.list(ImageContentSourcePolicies),
      imageConfigs: this.list(ImageConfigs) as ImageConfig[],
      clusterImagePolicies: this.list(ClusterImagePolicies) as SignaturePolicy[],
      imagePolicies: this.list(ImagePolicies) as SignaturePolicy[],
    };
    const next = clusterRegistryPolicy(objects, this.o.extraInsecureRegistries);
    const allowed = unenforcedAllowedRegistries(objects.imageConfigs).join(',');
    if (allowed !== this.warnedAllowed) {
      this.warnedAllowed = allowed;
      if (allowed)
        this.o.logger.warn(
          { allowedRegistries: allowed },
          'image.config.openshift.io/cluster sets both allowedRegistries and blockedRegistries, which the Machine Config Operator refuses to apply to the nodes; image inspection enforces only blockedRegistries until one of them is removed',
        );
    }
    if (samePolicy(next, this.policy)) return;
    this.policy = next;
    this.o.logger.info(
      {
        digestMirrorRules: next.digestMirrors.length,
        tagMirrorRules: next.tagMirrors.length,
        insecureRegistries: next.insecureRegistries,
        blockedRegistries: next.blockedRegistries,
        searchRegistries: next.searchRegistries ?? [],
        imagePolicyScopes: next.imageAdmission?.scopes.length ?? 0,
        refusesUnlisted: next.imageAdmission?.defaultRequirement === 'reject',
      },
      'registry policy changed',
    );
    this.o.onChange?.(next);
  }
}

/**
 * The policy kinds this API server serves, from one discovery request per group version. A group version that is
 * not installed (404, plain Kubernetes) is skipped and logged at info; any other failure is thrown.
 */
export async function discoverPolicyKinds(
  client: Pick<KubeClient, 'request'>,
  logger: Logger,
  signal?: AbortSignal,
): Promise<ResourceType[]> {
  const discovery = new Map<string, ApiResourceList | undefined>();
  for (const gv of new Set(REGISTRY_POLICY_KINDS.map((k) => `${k.group}/${k.version}`))) {
    discovery.set(
      gv,
      await ignoreNotFound(client.request<ApiResourceList>({ method: 'GET', path: `/apis/${gv}`, signal })),
    );
  }
  const served = servedKinds(REGISTRY_POLICY_KINDS, discovery);
  const missing = REGISTRY_POLICY_KINDS.filter((k) => !served.includes(k));
  if (missing.length > 0)
    logger.info(
      { kinds: missing.map((k) => `${k.plural}.${k.group}`) },
      'registry policy kinds not served by this cluster; their mirrors and registry rules do not apply',
    );
  return served;
}

/** What reading the cluster's additionalTrustedCA found. */
export interface TrustedCaRead {
  /** `openshift-config/<name>` when the image config names a ConfigMap. */
  readonly configMap?: string;
  /** `missing`: named but absent; `unset`: not named, or the image config kind is not served. */
  readonly state: 'unset' | 'missing' | 'read';
  /** Each bundle is trusted only for the registry host its key names. */
  readonly bundles: readonly RegistryCaBundle[];
  /** Keys that name no registry host or whose value holds no PEM certificate (not trusted). */
  readonly ignoredKeys: readonly string[];
}

/**
 * Reads the cluster's `image.config.openshift.io/cluster` spec.additionalTrustedCA ConfigMap (in openshift-config),
 * whose CA certificates registries are trusted with on OpenShift. Throws on API errors other than NotFound.
 */
export async function fetchAdditionalTrustedCa(
  client: Pick<KubeClient, 'request'>,
  kinds: readonly ResourceType[],
  signal?: AbortSignal,
): Promise<TrustedCaRead> {
  const unset: TrustedCaRead = { state: 'unset', bundles: [], ignoredKeys: [] };
  if (!kinds.includes(ImageConfigs)) return unset;
  const get = <T>(path: string): Promise<T | undefined> =>
    ignoreNotFound(client.request<T>({ method: 'GET', path, signal }));
  const imageConfig = await get<ImageConfig>(resourcePath(ImageConfigs, undefined, IMAGE_CONFIG_NAME));
  const name = additionalTrustedCaName(imageConfig ? [imageConfig] : []);
  if (!name) return unset;
  const configMapRef = `${ADDITIONAL_TRUSTED_CA_NAMESPACE}/${name}`;
  const configMap = await get<{ data?: Record<string, string> }>(
    resourcePath(ConfigMaps, ADDITIONAL_TRUSTED_CA_NAMESPACE, name),
  );
  if (!configMap) return { configMap: configMapRef, state: 'missing', bundles: [], ignoredKeys: [] };
  return { configMap: configMapRef, state: 'read', ...additionalTrustedCas(configMap.data) };
}

/** Logs what an administrator should fix in a read: a named ConfigMap that is absent, entries that are no PEM. */
export function reportTrustedCaRead(read: TrustedCaRead, logger: Logger): void {
  if (read.state === 'missing')
    logger.warn(
      { configMap: read.configMap },
      'image.config.openshift.io/cluster names an additionalTrustedCA ConfigMap that does not exist; its registries are not trusted',
    );
  if (read.ignoredKeys.length > 0)
    logger.warn(
      { configMap: read.configMap, keys: read.ignoredKeys },
      'additionalTrustedCA entries whose key names no registry host (host, or host..port) or whose value holds no PEM certificate are ignored',
    );
}

/**
 * The CA bundles of the cluster's additionalTrustedCA ConfigMap (fetchAdditionalTrustedCa) by registry host, with
 * problems logged. Empty when the kind is not served (`kinds`, from discoverPolicyKinds) or the image config or its
 * ConfigMap is missing.
 */
export async function readAdditionalTrustedCas(
  client: Pick<KubeClient, 'request'>,
  kinds: readonly ResourceType[],
  logger: Logger,
  signal?: AbortSignal,
): Promise<HostCaCertificates> {
  const read = await fetchAdditionalTrustedCa(client, kinds, signal);
  reportTrustedCaRead(read, logger);
  return hostCaCertificatesOf(read.bundles);
}

/** Default re-read interval of TrustedCaWatch. */
export const TRUSTED_CA_POLL_INTERVAL_MS = 60_000;
/**
 * Default shortest time between two reads of TrustedCaWatch: image config events closer together than this are
 * folded into one read (an operator rewriting the image config in a loop must not turn into API requests).
 */
export const TRUSTED_CA_MIN_READ_INTERVAL_MS = 2_000;

export interface TrustedCaWatchOptions {
  client: Pick<KubeClient, 'request'>;
  /** Served policy kinds (discoverPolicyKinds). */
  kinds: readonly ResourceType[];
  /** The image config informer, when the kind is served: a change of it is read at once. */
  imageConfigs?: PolicyInformer;
  /** What was read at start (the watch reports only changes from it). */
  initial: TrustedCaRead;
  /** Called with the new bundles, by host, when they differ from the ones held. */
  onChange: (hostCaCertificates: HostCaCertificates) => void;
  clock: Clock;
  logger: Logger;
  /** Default: TRUSTED_CA_POLL_INTERVAL_MS. */
  intervalMs?: number;
  /** Shortest time between the starts of two reads, in ms. Default: TRUSTED_CA_MIN_READ_INTERVAL_MS. */
  minReadIntervalMs?: number;
}

/**
 * Keeps the additionalTrustedCA certificates current while the operator runs, so an administrator who adds or
 * rotates a registry CA does not have to restart it. The ConfigMap's name is the administrator's choice and the
 * operator may only `get` ConfigMaps in openshift-config (no list or watch there), so the ConfigMap is re-read every
 * interval, and when the image config changes: at once for a single change, then at most once per
 * `minReadIntervalMs`, so a burst of changes costs one read in flight and one trailing read that sees the last of
 * them (reads never overlap). A failed read keeps the certificates held; a ConfigMap that is deleted or no longer
 * named drops them.
 */
export class TrustedCaWatch implements Runnable {
  readonly name = 'registry-trusted-ca-watch';
  private held: TrustedCaRead;
  /** Interrupts the interval sleep only (never the min-interval wait, which is what folds a burst). */
  private wakeUp: () => void = () => undefined;
  /** Set by an image config event; cleared when the read that will see that event starts. */
  private wokenEarly = false;

  constructor(private readonly o: TrustedCaWatchOptions) {
    this.held = o.initial;
    const wake = (): void => {
      this.wokenEarly = true;
      this.wakeUp();
    };
    o.imageConfigs?.addEventHandler({ onAdd: wake, onUpdate: wake, onDelete: wake });
  }

  async start(signal: AbortSignal): Promise<void> {
    const minReadIntervalMs = this.o.minReadIntervalMs ?? TRUSTED_CA_MIN_READ_INTERVAL_MS;
    let lastReadAt = -Infinity;
    while (!signal.aborted) {
      if (!this.wokenEarly) await this.sleep(signal);
      const wait = lastReadAt + minReadIntervalMs - this.o.clock.now();
      if (wait > 0) await this.o.clock.sleep(wait, signal);
      if (signal.aborted) break;
      this.wokenEarly = false;
      lastReadAt = this.o.clock.now();
      try {
        this.observe(await fetchAdditionalTrustedCa(this.o.client, this.o.kinds, signal));
      } catch (err) {
        if (signal.aborted) break;
        this.o.logger.warn(
          { err, configMap: this.held.configMap },
          'could not re-read the additionalTrustedCA ConfigMap; keeping the registry CAs held',
        );
      }
    }
  }

  private sleep(signal: AbortSignal): Promise<void> {
    const interrupt = new AbortController();
    const stop = (): void => interrupt.abort();
    signal.addEventListener('abort', stop, { once: true });
    this.wakeUp = stop;
    return this.o.clock
      .sleep(this.o.intervalMs ?? TRUSTED_CA_POLL_INTERVAL_MS, interrupt.signal)
      .finally(() => {
        signal.removeEventListener('abort', stop);
        this.wakeUp = () => undefined;
      });
  }

  private observe(read: TrustedCaRead): void {
    const before = this.held;
    this.held = read;
    if (JSON.stringify(read) === JSON.stringify(before)) return;
    reportTrustedCaRead(read, this.o.logger);
    const next = hostCaCertificatesOf(read.bundles);
    if (sameHostCaCertificates(next, hostCaCertificatesOf(before.bundles))) return;
    this.o.logger.info(
      { configMap: read.configMap ?? before.configMap, registries: [...next.keys()] },
      'registry CAs (additionalTrustedCA) changed; each trusted for its own registry from the next inspection on',
    );
    this.o.onChange(next);
  }
}

/**
 * What a one-shot command trusts, read the way the operator reads it: the registry policy of the served policy
 * kinds (clusterRegistryPolicy, as RegistryPolicyWatch computes it) and the additionalTrustedCA bundles by host.
 */
export async function readRegistryTrust(
  client: Pick<KubeClient, 'request'>,
  logger: Logger,
  signal?: AbortSignal,
): Promise<{ policy: RegistryPolicy; hostCaCertificates: HostCaCertificates }> {
  const kinds = await discoverPolicyKinds(client, logger, signal);
  const list = async (type: ResourceType): Promise<KubeObject[]> =>
    kinds.includes(type)
      ? ((await client.request<KubeList<KubeObject>>({ method: 'GET', path: resourcePath(type), signal }))
          .items ?? [])
      : [];
  const objects: RegistryPolicyObjects = {
    imageDigestMirrorSets: await list(ImageDigestMirrorSets),
    imageTagMirrorSets: await list(ImageTagMirrorSets),
    imageContentSourcePolicies: await list(ImageContentSourcePolicies),
    imageConfigs: (await list(ImageConfigs)) as ImageConfig[],
    clusterImagePolicies: (await list(ClusterImagePolicies)) as SignaturePolicy[],
    imagePolicies: (await list(ImagePolicies)) as SignaturePolicy[],
  };
  return {
    policy: clusterRegistryPolicy(objects),
    hostCaCertificates: await readAdditionalTrustedCas(client, kinds, logger, signal),
  };
}
