// Every file update status generates, for hack/generate.ts (`npm run generate`, `npm run generate:check`): the
// UpdateStatus CRD, from schema.ts. Its development CRDs of OpenShift kinds (dev-crds.ts) are applied from code, not
// committed as files. Pure.
import type { GeneratedFile } from '../../runtime/light.js';
import { UPDATE_STATUS_CRD_FILE, updateStatusCrdYaml } from './crd.js';

export function generatedFiles(): GeneratedFile[] {
  return [{ path: UPDATE_STATUS_CRD_FILE, content: updateStatusCrdYaml() }];
}
