import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../runtime/index.js';
import { parseNodePoolTarget } from './status-command.js';

describe('tessera nodepool status NAMESPACE/NAME', () => {
  it('splits namespace and name', () => {
    expect(parseNodePoolTarget('clusters/np-a')).toEqual({ namespace: 'clusters', name: 'np-a' });
  });

  it.each(['np-a', '/np-a', 'clusters/', 'a/b/c'])('rejects %s, showing the expected form', (target) => {
    expect(() => parseNodePoolTarget(target)).toThrow(InvalidArgumentError);
    expect(() => parseNodePoolTarget(target)).toThrow(/expected NAMESPACE\/NAME/);
  });
});
