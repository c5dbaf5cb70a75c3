// Test doubles of the runtime (as k8s.io/utils/clock/testing and client-go's fake list-watchers): a manually driven
// Clock, a scripted list/watch source, and a scripted API server for the client's own behaviour. Imported by tests
// only: lint refuses it in product code and the build leaves it out of dist/.
export { FakeClock, flushAsync } from './fake-clock.js';
export {
  FakeListWatch,
  openWatch,
  closedWatch,
  type ListWatchScript,
  type ListWatchCall,
} from './fake-list-watch.js';
export {
  withScriptedApiServer,
  type ScriptedAnswer,
  type ScriptedApiServerCounts,
} from './scripted-api-server.js';
export { MemoryLeases, type MemoryLeaseMode } from './memory-leases.js';
