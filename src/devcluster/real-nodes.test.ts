import { describe, expect, it } from 'vitest';
import { hostArchitecture, realNodeName, realNodeSupportProblem } from './real-nodes.js';

describe('real nodes', () => {
  it('are refused without root, saying why and what works instead', () => {
    expect(realNodeSupportProblem(1000)).toMatch(/need root.*kwok nodes only/);
  });

  it("are named and labelled with this machine's architecture as Kubernetes spells it", () => {
    expect(hostArchitecture('x64')).toBe('amd64');
    expect(hostArchitecture('ppc64')).toBe('ppc64le');
    expect(hostArchitecture('s390x')).toBe('s390x');
    expect(realNodeName(0)).toBe(`real-${hostArchitecture()}-0`);
  });
});
