// Test doubles of the runtime (as k8s.io/utils/clock/testing and client-go's fake list-watchers): a manually driven
// Clock and a scripted list/watch source. Imported by tests only: lint refuses it in product code and the build
// leaves it out of dist/.
export { FakeClock, flushAsync } from './fake-clock.js';
export {
  FakeListWatch,
  openWatch,
  closedWatch,
  type ListWatchScript,
  type ListWatchCall,
} from './fake-list-watch.js';
