// Puts the repository's LICENSE in the package folder, for `npm pack` (prepack) to include: the package is the
// repository's code under the repository's licence, which package.json's `license` names. Not kept in git there.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const packageFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const licence = path.resolve(packageFolder, '..', '..', 'LICENSE');
if (!fs.existsSync(licence)) {
  console.error('copy-licence: no ' + licence + ': pack the package inside the repository (clients/javascript)');
  process.exit(1);
}
fs.copyFileSync(licence, path.join(packageFolder, 'LICENSE'));
