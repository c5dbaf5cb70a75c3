// The exec format error monitor, decided from what the kubelet reports (no eBPF, no privileged DaemonSet): a
// container whose binary is built for another architecture than its node's fails at exec, and the kubelet shows the
// failure in the pod's status. Pure: which pod fields are kept (projectExecWatchedPod), which terminated container
// instances to look at and how (containersToExamine), and the finding with its message (execFormatErrorFinding).
// The shell (operator/exec-format-error-monitor.ts) reads logs, the Node's architecture, and emits.
//
// What the kubelet reports (measured on a real node: kubelet v1.37, containerd 2.4, runc 1.1.5, an arm64 static
// binary on amd64): the container starts, runc's init fails the execve and writes `exec /hello: exec format error`
// to the container's stderr, and the instance ends `terminated: {reason: Error, exitCode: 1}` with startedAt equal
// to finishedAt; the pod goes to CrashLoopBackOff (restartPolicy Always) or Failed (Never). The text is in
// `terminated.message` only with `terminationMessagePolicy: FallbackToLogsOnError` (the kubelet copies the log's
// tail); with the default policy (File) it is only in the container's log, which the API server serves
// (pods/log?previous=true). Runtimes that fail the exec before start report it as `reason: StartError` with the
// text in the message. So: the message when it says so, else the log tail of an instance that failed within a
// second of starting.
//
// Names reused from the Multiarch Tuning Operator (github.com/openshift/multiarch-tuning-operator): the event
// reason `ExecFormatError` and the pod label `multiarch.openshift.io/exec-format-error` (pkg/utils/const.go), the
// counter `mto_enoexecevents_total` (internal/controller/enoexecevent/handler/metrics) and the alert
// `ExecFormatErrorsDetected` (internal/controller/operator/enoexecevent_objects.go).
//
// Budgets, for what a tenant controls (container names, images, messages, logs, the number of containers):
//   MAX_SCANNED_TEXT_CHARS        of a termination message or log tail, searched for the fixed text
//   MAX_CONTAINERS_EXAMINED       container statuses examined per pod and pass
//   MAX_LOG_TAIL_BYTES/LINES      of a log read (the API server stops there: limitBytes, tailLines)
//   MAX_NAME_CHARS/IMAGE_CHARS    of a container name or image quoted in a message
//   MAX_FINDING_MESSAGE_CHARS     of the Event's message (events.k8s.io's note is at most 1 kB)
import { truncateText } from '../runtime/light.js';
import { ARCH_LABEL, LABELS, LABEL_VALUES, SUPPORTED_ARCHITECTURES, archLabel } from './constants.js';
import { isArchitecturePinned } from './pod-model.js';
import type { Container, Pod, PodMeta } from './pod-types.js';

/** MTO's event reason (utils.ExecFormatErrorEventReason), a Warning on the pod. */
export const EXEC_FORMAT_ERROR_EVENT_REASON = 'ExecFormatError';
/** MTO's pod label (utils.ExecFormatErrorLabelKey), set to "true" on a pod with a finding. */
export const EXEC_FORMAT_ERROR_LABEL = 'multiarch.openshift.io/exec-format-error';
/** MTO's counter of exec format errors detected and reported. */
export const EXEC_FORMAT_ERRORS_METRIC = 'mto_enoexecevents_total';
/** MTO's alert on that counter. */
export const EXEC_FORMAT_ERRORS_ALERT = 'ExecFormatErrorsDetected';

/** What execve's ENOEXEC reads as (strerror), in every runtime's report; compared without case. */
export const EXEC_FORMAT_ERROR_TEXT = 'exec format error';
export const MAX_SCANNED_TEXT_CHARS = 4096;
export const MAX_CONTAINERS_EXAMINED = 64;
export const MAX_LOG_TAIL_BYTES = 2048;
export const MAX_LOG_TAIL_LINES = 5;
/** An instance that ran longer than this (finishedAt - startedAt, whole seconds) did not fail at exec. */
export const MAX_EXEC_FAILURE_RUN_SECONDS = 1;
export const MAX_NAME_CHARS = 63;
export const MAX_IMAGE_CHARS = 256;
export const MAX_FINDING_MESSAGE_CHARS = 1024;

/** A terminated container instance, as kept: no other text than the verdict on its message. */
export interface TerminatedInstance {
  readonly containerID?: string;
  readonly exitCode?: number;
  readonly reason?: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  /** Kept only as EXEC_FORMAT_ERROR_TEXT, when the kubelet's message contains it. */
  readonly message?: string;
}

export interface WatchedContainerStatus {
  readonly name: string;
  readonly restartCount?: number;
  readonly state?: { readonly terminated?: TerminatedInstance };
  readonly lastState?: { readonly terminated?: TerminatedInstance };
}

/** The pod as the monitor's cache keeps it: a Pod in shape, with its container statuses' failures only. */
export interface ExecWatchedPod extends Pod {
  readonly status?: {
    readonly phase?: string;
    readonly containerStatuses?: readonly WatchedContainerStatus[];
    readonly initContainerStatuses?: readonly WatchedContainerStatus[];
  };
}

/** True when `text` (its first MAX_SCANNED_TEXT_CHARS) contains "exec format error", in any case. */
export function saysExecFormatError(text: string | undefined): boolean {
  if (!text) return false;
  return text.slice(0, MAX_SCANNED_TEXT_CHARS).toLowerCase().includes(EXEC_FORMAT_ERROR_TEXT);
}

/** Labels pod placement records that the finding's message reads: its decision and the images' architectures. */
const PLACEMENT_LABELS: readonly string[] = [
  LABELS.schedulingGate,
  LABELS.nodeAffinity,
  LABELS.fallbackArch,
  EXEC_FORMAT_ERROR_LABEL,
  ...SUPPORTED_ARCHITECTURES.map(archLabel),
];

/**
 * What the monitor keeps of a pod (the informer's transform): name, namespace, uid and resourceVersion; and, only
 * while some container status shows a failed terminated instance (non-zero exit code), those instances with their
 * message reduced to the verdict, pod placement's labels, spec.nodeName, the kubernetes.io/arch nodeSelector, the
 * required node affinity (whether the pod pins its architecture) and the containers' names and images. A pod
 * whose containers run or succeeded costs its four identifying strings.
 */
export function projectExecWatchedPod<P extends ExecWatchedPod>(pod: P): P {
  const meta = pod.metadata ?? {};
  const metadata: { -readonly [K in keyof PodMeta]: PodMeta[K] } = {};
  if (meta.name !== undefined) metadata.name = meta.name;
  if (meta.namespace !== undefined) metadata.namespace = meta.namespace;
  if (meta.uid !== undefined) metadata.uid = meta.uid;
  if (meta.resourceVersion !== undefined) metadata.resourceVersion = meta.resourceVersion;
  const containerStatuses = failedOnly(pod.status?.containerStatuses);
  const initContainerStatuses = failedOnly(pod.status?.initContainerStatuses);
  if (containerStatuses.length === 0 && initContainerStatuses.length === 0) return { metadata } as P;

  const labels: Record<string, string> = {};
  for (const key of PLACEMENT_LABELS) {
    const value = meta.labels?.[key];
    if (value !== undefined) labels[key] = value;
  }
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  const spec = pod.spec ?? {};
  const arch = spec.nodeSelector?.[ARCH_LABEL];
  const required = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  const out: ExecWatchedPod = {
    metadata,
    spec: {
      ...(spec.nodeName !== undefined ? { nodeName: spec.nodeName } : {}),
      ...(arch !== undefined ? { nodeSelector: { [ARCH_LABEL]: arch } } : {}),
      ...(required !== undefined
        ? { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: required } } }
        : {}),
      ...(spec.containers !== undefined ? { containers: spec.containers.map(nameAndImage) } : {}),
      ...(spec.initContainers !== undefined ? { initContainers: spec.initContainers.map(nameAndImage) } : {}),
    },
    status: {
      ...(containerStatuses.length > 0 ? { containerStatuses } : {}),
      ...(initContainerStatuses.length > 0 ? { initContainerStatuses } : {}),
    },
  };
  return out as P;
}

function nameAndImage(c: Container): Container {
  return c.image === undefined ? { name: c.name } : { name: c.name, image: c.image };
}

function failedOnly(statuses: readonly WatchedContainerStatus[] | undefined): WatchedContainerStatus[] {
  const out: WatchedContainerStatus[] = [];
  for (const s of (statuses ?? []).slice(0, MAX_CONTAINERS_EXAMINED)) {
    const current = failed(s.state?.terminated);
    const last = failed(s.lastState?.terminated);
    if (!current && !last) continue;
    out.push({
      name: s.name,
      ...(s.restartCount !== undefined ? { restartCount: s.restartCount } : {}),
      ...(current ? { state: { terminated: current } } : {}),
      ...(last ? { lastState: { terminated: last } } : {}),
    });
  }
  return out;
}

function failed(t: TerminatedInstance | undefined): TerminatedInstance | undefined {
  if (!t || !t.exitCode) return undefined;
  return {
    exitCode: t.exitCode,
    ...(t.containerID !== undefined ? { containerID: t.containerID } : {}),
    ...(t.reason !== undefined ? { reason: t.reason } : {}),
    ...(t.startedAt !== undefined ? { startedAt: t.startedAt } : {}),
    ...(t.finishedAt !== undefined ? { finishedAt: t.finishedAt } : {}),
    ...(saysExecFormatError(t.message) ? { message: EXEC_FORMAT_ERROR_TEXT } : {}),
  };
}

/** A failed container instance to look at, and where the evidence is. */
export interface ContainerToExamine {
  readonly container: string;
  readonly init: boolean;
  /** Identifies the instance (its containerID, else restart count and finish time): examined once. */
  readonly instance: string;
  /** `status`: the message says it; `log`: read the log tail (`previous` when the container has restarted since). */
  readonly evidence: 'status' | 'log';
  readonly previous: boolean;
}

/** Whole seconds between two RFC 3339 times, or undefined when either is missing or unreadable. */
function runSeconds(t: TerminatedInstance): number | undefined {
  if (!t.startedAt || !t.finishedAt) return undefined;
  const ms = Date.parse(t.finishedAt) - Date.parse(t.startedAt);
  return Number.isFinite(ms) ? ms / 1000 : undefined;
}

/**
 * The failed container instances `pod` shows (at most one per container: the current one if it is the failed one,
 * else the last), with where their evidence is: the message when it says "exec format error"; else the log, for an
 * instance that ended within MAX_EXEC_FAILURE_RUN_SECONDS of starting (an exec failure ends at once). Other failed
 * instances are not candidates: `skip` names them, so the caller remembers them without reading anything.
 */
export function containersToExamine(pod: ExecWatchedPod): { examine: ContainerToExamine[]; skip: string[] } {
  const examine: ContainerToExamine[] = [];
  const skip: string[] = [];
  const statuses = [
    ...(pod.status?.initContainerStatuses ?? []).map((s) => ({ s, init: true })),
    ...(pod.status?.containerStatuses ?? []).map((s) => ({ s, init: false })),
  ].slice(0, MAX_CONTAINERS_EXAMINED);
  for (const { s, init } of statuses) {
    // The current instance if it is the failed one (restartPolicy Never, or between restarts), else the last.
    const current = s.state?.terminated;
    const t = current ?? s.lastState?.terminated;
    if (!t) continue;
    const instance = `${init ? 'init:' : ''}${s.name}/${t.containerID ?? `restart-${s.restartCount ?? 0}@${t.finishedAt ?? ''}`}`;
    const base = { container: s.name, init, instance, previous: current === undefined };
    if (t.message === EXEC_FORMAT_ERROR_TEXT) examine.push({ ...base, evidence: 'status' });
    else if ((runSeconds(t) ?? Infinity) <= MAX_EXEC_FAILURE_RUN_SECONDS)
      examine.push({ ...base, evidence: 'log' });
    else skip.push(instance);
  }
  return { examine, skip };
}

/**
 * One pass over `pod`: the failed instances not in `examined` yet (each looked at once: a resync or an unrelated
 * change of the pod examines nothing again, a restart's new instance is examined), and what to remember after the
 * pass, which is every failed instance the status still shows (nothing else can come back), so what is remembered
 * is bounded by the pod's containers.
 */
export function examinationPass(
  pod: ExecWatchedPod,
  examined: ReadonlySet<string>,
): { examine: ContainerToExamine[]; remember: Set<string> } {
  const { examine, skip } = containersToExamine(pod);
  return {
    examine: examine.filter((c) => !examined.has(c.instance)),
    remember: new Set([...skip, ...examine.map((c) => c.instance)]),
  };
}

export interface ExecFormatErrorFinding {
  readonly container: string;
  readonly init: boolean;
  readonly image: string | undefined;
  readonly nodeName: string | undefined;
  readonly nodeArchitecture: string | undefined;
  /** The Event's message: what failed, which image lacks which architecture, why it ran there, what to do. */
  readonly message: string;
}

/** The architectures pod placement recorded for the pod's images (its `multiarch.openshift.io/<arch>` labels). */
export function recordedArchitectures(pod: Pod): string[] {
  const labels = pod.metadata?.labels ?? {};
  return SUPPORTED_ARCHITECTURES.filter((a) => labels[archLabel(a)] !== undefined);
}

/** The kubernetes.io/arch values the pod itself requires (nodeSelector, or In expressions of required terms). */
export function requiredArchitectures(pod: Pod): string[] {
  const selected = pod.spec?.nodeSelector?.[ARCH_LABEL];
  if (selected !== undefined) return [selected];
  const terms =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const values = new Set<string>();
  for (const term of terms ?? [])
    for (const e of term.matchExpressions ?? [])
      if (e.key === ARCH_LABEL && e.operator === 'In') for (const v of e.values ?? []) values.add(v);
  return [...values].sort();
}

const list = (archs: readonly string[]): string =>
  archs.map((a) => truncateText(a, MAX_NAME_CHARS)).join(', ');

/**
 * The finding for `container` of `pod`, which failed with "exec format error" on a node of `nodeArchitecture`
 * (the Node's kubernetes.io/arch label; undefined when the Node or its label is gone). The message says which image
 * lacks which architecture, what pod placement recorded for the pod (the images' architectures it found, the
 * fallback it used, or that it did not place the pod, and why), and what to do.
 */
export function execFormatErrorFinding(input: {
  pod: ExecWatchedPod;
  container: string;
  init: boolean;
  nodeArchitecture: string | undefined;
  evidence: 'status' | 'log';
}): ExecFormatErrorFinding {
  const { pod, init } = input;
  const containers = (init ? pod.spec?.initContainers : pod.spec?.containers) ?? [];
  const image = containers.find((c) => c.name === input.container)?.image;
  const nodeName = pod.spec?.nodeName;
  const arch = input.nodeArchitecture ? truncateText(input.nodeArchitecture, MAX_NAME_CHARS) : undefined;
  const imageText = image ? `image ${truncateText(image, MAX_IMAGE_CHARS, '...')}` : 'its image';
  const where = nodeName ? `node ${truncateText(nodeName, MAX_IMAGE_CHARS, '...')}` : 'its node';
  const archText = arch ?? "the node's architecture";
  const said = input.evidence === 'status' ? 'its termination message' : 'the last lines of its log';
  const head =
    `${init ? 'Init container' : 'Container'} ${JSON.stringify(truncateText(input.container, MAX_NAME_CHARS))} ` +
    `failed with "exec format error" (${said}) on ${where}${arch ? ` (${arch})` : ''}: ` +
    `${imageText} runs a binary that is not built for ${archText}.`;

  const labels = pod.metadata?.labels ?? {};
  const recorded = recordedArchitectures(pod);
  const fallback = labels[LABELS.fallbackArch];
  const required = requiredArchitectures(pod);
  let why: string;
  if (labels[LABELS.nodeAffinity] === LABEL_VALUES.set && fallback !== undefined) {
    why =
      ` Pod placement could not inspect the pod's images and required the ClusterPodPlacementConfig's ` +
      `fallbackArchitecture (${truncateText(fallback, MAX_NAME_CHARS)}), which ${imageText} lacks. Make the ` +
      `images inspectable (registry access, pull secrets) so the pod is placed on an architecture they support, or ` +
      `change the fallbackArchitecture.`;
  } else if (labels[LABELS.nodeAffinity] === LABEL_VALUES.set && recorded.length > 0) {
    why =
      arch !== undefined && recorded.includes(arch)
        ? ` Pod placement found ${arch} in the manifests of the pod's images (together they support ` +
          `${list(recorded)}), so ${imageText} declares ${arch} but carries a binary of another architecture: its ` +
          `${arch} variant is built wrong, or the binary comes from a volume or a download. Ask the image's ` +
          `publisher for a correct ${arch} build; meanwhile give the pod a kubernetes.io/arch node affinity ` +
          `without ${arch}.`
        : ` Pod placement required kubernetes.io/arch in (${list(recorded)}) for this pod (what its images ` +
          `support), yet it runs on ${archText}: its node affinity was changed after placement, or spec.nodeName ` +
          `bypassed it. Let the scheduler place the pod with the affinity pod placement set.`;
  } else if (required.length > 0 || isArchitecturePinned(pod)) {
    why =
      ` The pod requires kubernetes.io/arch in (${list(required)}) itself, so pod placement left its affinity ` +
      `alone: require an architecture that ${imageText} supports, or remove the requirement so pod placement ` +
      `places the pod.`;
  } else if (labels[LABELS.schedulingGate] === LABEL_VALUES.notSet) {
    why =
      ` Pod placement's webhook admitted the pod without gating it, so it set no architecture: spec.nodeName ` +
      `was set at creation (which bypasses the scheduler and pod placement), or the pod is a DaemonSet's, selects ` +
      `control-plane nodes, or is in a namespace pod placement leaves alone (\`tessera podplacement explain\` ` +
      `says which). Give the pod a kubernetes.io/arch node affinity for an architecture ${imageText} supports, or ` +
      `create it so that pod placement places it.`;
  } else if (labels[LABELS.schedulingGate] === undefined) {
    why =
      ` Pod placement never saw the pod: its namespace is not selected by the ClusterPodPlacementConfig's ` +
      `namespaceSelector, or the pod was created before pod placement was enabled. Give the pod a ` +
      `kubernetes.io/arch node affinity for an architecture ${imageText} supports, or let pod placement place it.`;
  } else {
    why =
      ` Pod placement set no architecture for this pod (its images' architectures could not be determined and ` +
      `no fallbackArchitecture is set). Give it a kubernetes.io/arch node affinity for an architecture ` +
      `${imageText} supports.`;
  }
  return {
    container: input.container,
    init,
    image,
    nodeName,
    nodeArchitecture: input.nodeArchitecture,
    message: truncateText(head + why, MAX_FINDING_MESSAGE_CHARS, '...'),
  };
}
