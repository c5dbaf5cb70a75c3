// Side-effect CSS imports, which vite bundles.
declare module '*.css';
