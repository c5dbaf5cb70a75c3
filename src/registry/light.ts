// The part of the registry's surface that loads no Node or third-party module: image reference parsing, for code
// that also runs in a browser (the dashboard's view builders in the console plugin). Everything else: ./index.ts.
export { formatReference, parseImageReference, type ImageReference } from './reference.js';
