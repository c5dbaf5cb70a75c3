// A real browser for the page tests: Debian's Chromium driven by playwright-core (no browser download). Fails with
// the exact install command when Chromium is not installed (npm test's global setup installs it as root).
import { accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_INSTALL_COMMAND = 'apt-get install -y --no-install-recommends chromium';

/** Launches headless Chromium; close it in afterAll. */
export async function launchBrowser(): Promise<Browser> {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
  } catch {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}; install it with: ${CHROMIUM_INSTALL_COMMAND}`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // Root in a container has no user namespace sandbox; the browser only loads the test's own loopback page.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}
