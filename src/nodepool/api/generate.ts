// The files generated from this area's API types, as a pure function; `npm run generate` (hack/generate.ts) writes
// them and `npm run generate:check` fails when one is stale.
import { renderCrds } from './crd.js';

/** Development CRDs for dev clusters, tests, the demo and the benchmark: deploy/crds/dev/<group>_<plural>.yaml. */
export function generatedFiles(): { path: string; content: string }[] {
  return renderCrds().map((crd) => ({ path: crd.file, content: crd.yaml }));
}
