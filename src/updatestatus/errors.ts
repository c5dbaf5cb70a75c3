// Typed errors of the update-status area. Callers branch on `code`, never on the message; messages say what
// happened and what to do (the oc wording is kept where users may search for it). A malformed flag is the
// runtime's InvalidArgumentError (one for every area).
import { TesseraError } from '../runtime/light.js';

export type UpdateStatusErrorCode =
  | 'TESSERA_UPDATESTATUS_NO_CLUSTERVERSION'
  | 'TESSERA_UPDATESTATUS_NO_CLUSTEROPERATORS'
  | 'TESSERA_UPDATESTATUS_NO_PROGRESSING'
  | 'TESSERA_UPDATESTATUS_INVALID_SELECTOR'
  | 'TESSERA_UPDATESTATUS_SNAPSHOT'
  | 'TESSERA_UPDATESTATUS_TOO_FEW_NODES'
  | 'TESSERA_UPDATESTATUS_NOT_AVAILABLE'
  | 'TESSERA_UPDATESTATUS_INFORMER_CONTRACT';

export class UpdateStatusError extends TesseraError<UpdateStatusErrorCode> {}

export class NoClusterVersionError extends UpdateStatusError {
  constructor() {
    super(
      'TESSERA_UPDATESTATUS_NO_CLUSTERVERSION',
      'no cluster version information available - you must be connected to an OpenShift version 4 server to fetch the current version',
    );
  }
}

export class NoClusterOperatorsError extends UpdateStatusError {
  constructor() {
    super(
      'TESSERA_UPDATESTATUS_NO_CLUSTEROPERATORS',
      'no cluster operator information available - you must be connected to an OpenShift version 4 server',
    );
  }
}

export class NoProgressingConditionError extends UpdateStatusError {
  constructor() {
    super(
      'TESSERA_UPDATESTATUS_NO_PROGRESSING',
      'no current Progressing info, see `oc describe clusterversion` for more details.',
    );
  }
}

export class InvalidSelectorError extends UpdateStatusError {
  constructor(pool: string, detail: string) {
    super(
      'TESSERA_UPDATESTATUS_INVALID_SELECTOR',
      `failed to get label selector from the pool: ${pool} (${detail})`,
    );
  }
}

export class SnapshotError extends UpdateStatusError {
  readonly file: string;
  constructor(file: string, detail: string, options?: { cause?: unknown }) {
    super('TESSERA_UPDATESTATUS_SNAPSHOT', `snapshot file ${file}: ${detail}`, options);
    this.file = file;
  }
}
