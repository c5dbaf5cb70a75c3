// Every file the NodePool area generates, for hack/generate.ts (`npm run generate`, `npm run generate:check`): the
// development CRDs of the HyperShift and Node Tuning kinds it reads and writes, from types.ts. Pure.
import type { GeneratedFile } from '../../runtime/light.js';
import { renderCrds } from './crd.js';

export function generatedFiles(): GeneratedFile[] {
  return renderCrds().map((crd) => ({ path: crd.file, content: crd.yaml }));
}
