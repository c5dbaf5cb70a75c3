// Every file pod placement generates, for hack/generate.ts (`npm run generate`, `npm run generate:check`): the CRDs
// of its own API, from schema.ts, and the development stand-ins of the OpenShift kinds its registry policy reads.
// Pure; only the generator and tests import this module, so the operator never loads the dev CRDs.
import type { GeneratedFile } from '../../runtime/light.js';
import { crdFileName, renderCrdYaml } from './crd.js';
import { devCrdFiles } from './dev-crds.js';
import { CLUSTER_POD_PLACEMENT_CONFIG, POD_PLACEMENT_CONFIG } from './schema.js';

export function generatedFiles(): GeneratedFile[] {
  return [
    ...[CLUSTER_POD_PLACEMENT_CONFIG, POD_PLACEMENT_CONFIG].map((kind) => ({
      path: `deploy/crds/${crdFileName(kind)}`,
      content: renderCrdYaml(kind),
    })),
    ...devCrdFiles(),
  ];
}
