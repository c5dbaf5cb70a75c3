// The UpdateStatus API's names, without the TypeBox schemas (schema.ts re-exports them): importing this costs
// nothing, so snapshot rendering and other commands that only need names start fast.
export const GROUP = 'update.openshift.io';
export const VERSION = 'v1alpha1';
export const KIND = 'UpdateStatus';
export const PLURAL = 'updatestatuses';
/** The one UpdateStatus object the controller maintains. */
export const SINGLETON_NAME = 'cluster';

/** A semantic version as the API spells it (no leading zeros in numeric identifiers). */
export const VERSION_PATTERN =
  '(?:0|[1-9]\\d*)[.](?:0|[1-9]\\d*)[.](?:0|[1-9]\\d*)(?:-(?:(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:[.](?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?';

/** Tessera's own informers (names as the reference controller's examples use them): control plane, and nodes. */
export const CONTROL_PLANE_INFORMER = 'cpi';
export const NODE_INFORMER = 'nodes';
