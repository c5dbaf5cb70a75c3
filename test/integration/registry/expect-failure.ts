// Awaits an inspection that must fail and returns its typed error, so tests can assert on `code`.
import { RegistryError } from '../../../src/registry/errors.js';

export async function failure(promise: Promise<unknown>): Promise<RegistryError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof RegistryError) return err;
    throw err;
  }
  throw new Error('expected the inspection to fail');
}
