// Converts ClusterPodPlacementConfig between v1alpha1 and v1beta1 (the storage version, the hub). Pure.
// Guarantees a lossless round trip both ways: spec fields v1alpha1 cannot express (plugins, fallbackArchitecture and
// any field unknown to v1alpha1) travel as JSON in the SPEC_ANNOTATION of the v1alpha1 object, which a v1alpha1
// update sends back; metadata other than that annotation and status are copied unchanged. The API server calls
// this through the operator's conversion webhook at CONVERSION_WEBHOOK_PATH.
import { API_GROUP } from '../constants.js';
import { TesseraError, isRecord, errorMessage } from '../../runtime/light.js';

export const V1ALPHA1 = `${API_GROUP}/v1alpha1`;
export const V1BETA1 = `${API_GROUP}/v1beta1`;

/** v1alpha1 annotation holding the v1beta1-only spec fields as a JSON object. */
export const SPEC_ANNOTATION = `${API_GROUP}/v1beta1-spec`;
/**
 * v1alpha1 annotation the reference operator uses for fallbackArchitecture; read (never written) so objects written
 * through its v1alpha1 keep their fallback architecture. SPEC_ANNOTATION wins when both are present.
 */
export const FALLBACK_ARCHITECTURE_ANNOTATION = `${API_GROUP}/fallback-architecture`;

/** Where the operator's webhook server answers ConversionReviews for ClusterPodPlacementConfig. */
export const CONVERSION_WEBHOOK_PATH = '/convert-clusterpodplacementconfig';

/** Spec fields v1alpha1 has; everything else in a v1beta1 spec is carried in SPEC_ANNOTATION. */
const V1ALPHA1_SPEC_FIELDS: readonly string[] = ['logVerbosity', 'namespaceSelector'];

export class ConversionError extends TesseraError<'TESSERA_PODPLACEMENT_CONVERSION'> {
  constructor(message: string) {
    super('TESSERA_PODPLACEMENT_CONVERSION', message);
  }
}

type JsonObject = Record<string, unknown>;

function annotationsOf(obj: JsonObject): Record<string, string> {
  const meta = isRecord(obj.metadata) ? obj.metadata : {};
  return isRecord(meta.annotations) ? (meta.annotations as Record<string, string>) : {};
}

/** `obj` with metadata.annotations replaced; an empty map removes the field. */
function withAnnotations(obj: JsonObject, annotations: Record<string, string>): JsonObject {
  const meta: JsonObject = isRecord(obj.metadata) ? { ...obj.metadata } : {};
  if (Object.keys(annotations).length > 0) meta.annotations = annotations;
  else delete meta.annotations;
  return { ...obj, metadata: meta };
}

/** v1beta1 (hub) -> v1alpha1. */
export function toV1alpha1(hub: JsonObject): JsonObject {
  const spec = isRecord(hub.spec) ? hub.spec : undefined;
  const { [SPEC_ANNOTATION]: _stale, ...annotations } = annotationsOf(hub);
  const out: JsonObject = { ...withAnnotations(hub, annotations), apiVersion: V1ALPHA1 };
  if (spec === undefined) return out;
  const alphaSpec: JsonObject = {};
  const extra: JsonObject = {};
  for (const [key, value] of Object.entries(spec)) {
    if (V1ALPHA1_SPEC_FIELDS.includes(key)) alphaSpec[key] = value;
    // '' is fallbackArchitecture's schema default, re-applied by the API server on the way back.
    else if (!(key === 'fallbackArchitecture' && value === '')) extra[key] = value;
  }
  if (Object.keys(extra).length > 0) annotations[SPEC_ANNOTATION] = JSON.stringify(extra);
  return { ...withAnnotations(out, annotations), spec: alphaSpec };
}

/** v1alpha1 -> v1beta1 (hub). */
export function toV1beta1(alpha: JsonObject): JsonObject {
  const {
    [SPEC_ANNOTATION]: carried,
    [FALLBACK_ARCHITECTURE_ANNOTATION]: legacyFallback,
    ...annotations
  } = annotationsOf(alpha);
  const restored: JsonObject = {};
  if (carried === undefined && legacyFallback !== undefined) restored.fallbackArchitecture = legacyFallback;
  // Only a consumed legacy annotation is dropped; otherwise it is user data like any other annotation.
  else if (legacyFallback !== undefined) annotations[FALLBACK_ARCHITECTURE_ANNOTATION] = legacyFallback;
  if (carried !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(carried);
    } catch (err) {
      throw new ConversionError(
        `annotation ${SPEC_ANNOTATION} is not valid JSON (${errorMessage(err)}); ` +
          'remove it or restore the value a v1alpha1 read returned',
      );
    }
    if (!isRecord(parsed))
      throw new ConversionError(
        `annotation ${SPEC_ANNOTATION} must hold a JSON object of v1beta1 spec fields`,
      );
    Object.assign(restored, parsed);
  }
  const out: JsonObject = { ...withAnnotations(alpha, annotations), apiVersion: V1BETA1 };
  const spec = isRecord(alpha.spec) ? alpha.spec : undefined;
  if (spec === undefined && Object.keys(restored).length === 0) return out;
  // Fields set through v1alpha1 win over stale copies in the annotation.
  return { ...out, spec: { ...restored, ...(spec ?? {}) } };
}

/** Converts a ClusterPodPlacementConfig of either version to `desiredAPIVersion`; same version: unchanged. */
export function convertClusterPodPlacementConfig(object: JsonObject, desiredAPIVersion: string): JsonObject {
  if (object.kind !== undefined && object.kind !== 'ClusterPodPlacementConfig')
    throw new ConversionError(`kind ${String(object.kind)} is not ClusterPodPlacementConfig`);
  const from = object.apiVersion;
  if (from !== V1ALPHA1 && from !== V1BETA1)
    throw new ConversionError(`apiVersion ${String(from)} is not ${V1ALPHA1} or ${V1BETA1}`);
  if (desiredAPIVersion !== V1ALPHA1 && desiredAPIVersion !== V1BETA1)
    throw new ConversionError(`cannot convert to ${desiredAPIVersion}; served: ${V1ALPHA1}, ${V1BETA1}`);
  if (from === desiredAPIVersion) return object;
  return desiredAPIVersion === V1ALPHA1 ? toV1alpha1(object) : toV1beta1(object);
}
