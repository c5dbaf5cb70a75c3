// Typed errors of the local control plane. Callers branch on `code`, never on the message.
import { TesseraError } from '../runtime/light.js';

export type DevClusterErrorCode =
  | 'TESSERA_DEVCLUSTER_CONFIG'
  | 'TESSERA_DEVCLUSTER_BINARIES_MISSING'
  | 'TESSERA_DEVCLUSTER_START_FAILED'
  | 'TESSERA_DEVCLUSTER_NOT_FOUND'
  | 'TESSERA_DEVCLUSTER_ALREADY_RUNNING'
  | 'TESSERA_DEVCLUSTER_PROBE_TIMEOUT'
  | 'TESSERA_DEVCLUSTER_REAL_NODES_UNSUPPORTED'
  | 'TESSERA_DEVCLUSTER_REAL_NODE_FAILED';

export class DevClusterError extends TesseraError<DevClusterErrorCode> {}
