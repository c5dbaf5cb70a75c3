// The shape budgets of the JSON a registry or its token service sends, and the one parse every such document goes
// through: the shape is scanned on the received bytes before JSON.parse (see the runtime's json-budget.ts), so a
// document of millions of tiny arrays, or nested millions deep, costs one linear pass and a typed refusal instead
// of the parser's heap. The byte limits (manifest 4 MiB, config 8 MiB, token 1 MiB) are enforced while receiving;
// these bound what the parser would build from those bytes. Callers keep only the fields they need.
import { JsonTooLargeError, parseBudgetedJson, type JsonShapeBudget } from '../runtime/light.js';
import { RegistryError } from './errors.js';

/** Shape budgets per kind of registry document (depth: the root is 1; values: containers + separators + 1). */
export interface RegistryJsonBudgets {
  /** Image manifests and indexes (manifest lists). */
  readonly manifest: JsonShapeBudget;
  /** Image config blobs. */
  readonly config: JsonShapeBudget;
  /** Token service answers. */
  readonly token: JsonShapeBudget;
  /** Distribution error bodies of non-2xx answers (over budget: the error just carries no registry detail). */
  readonly errorBody: JsonShapeBudget;
}

/**
 * The budgets used unless overridden. Each is an order of magnitude above what real documents need, and small
 * enough that what the parser builds stays a few MiB (some 60 bytes of heap per value at worst):
 * - manifest: an index at its 1,000-entry cap, each entry a descriptor with platform, os.features and a few
 *   dozen annotations, is ~40,000 values; a manifest of 1,000 layers ~10,000. Real nesting is 5 levels.
 * - config: a Docker config with a 1,000-step history, 1,000 layer diff IDs and hundreds of Env and Labels
 *   entries is ~10,000 values, 4 levels deep.
 * - token: `{"token", "access_token", "expires_in", "issued_at"}` is 5 values, 1 level.
 * - errorBody: `{"errors": [{"code", "message", "detail"}]}`, of which only the first code and message are read.
 */
export const defaultRegistryJsonBudgets: RegistryJsonBudgets = {
  manifest: { maxDepth: 32, maxValues: 50_000 },
  config: { maxDepth: 32, maxValues: 100_000 },
  token: { maxDepth: 8, maxValues: 1_000 },
  errorBody: { maxDepth: 16, maxValues: 10_000 },
};

/** `defaultRegistryJsonBudgets` with `overrides` applied per kind. */
export function registryJsonBudgets(overrides: Partial<RegistryJsonBudgets> = {}): RegistryJsonBudgets {
  return { ...defaultRegistryJsonBudgets, ...overrides };
}

/**
 * JSON.parse of `body` (named `what`, e.g. "the image config of HOST/REPO@sha256:..."), after its shape passed
 * `budget`. Over budget: TESSERA_REGISTRY_TOO_LARGE, not retryable (the registry will send the same bytes again),
 * so a pod waiting on it is released at once with the cause; malformed JSON: TESSERA_REGISTRY_BAD_RESPONSE with
 * the message `malformed`.
 */
export function parseRegistryJson(
  body: Uint8Array,
  budget: JsonShapeBudget,
  what: string,
  malformed: string,
): unknown {
  try {
    return parseBudgetedJson(body, budget, what);
  } catch (err) {
    if (err instanceof JsonTooLargeError)
      throw new RegistryError('TESSERA_REGISTRY_TOO_LARGE', err.message, { cause: err });
    throw new RegistryError('TESSERA_REGISTRY_BAD_RESPONSE', malformed, { cause: err });
  }
}
