#!/usr/bin/env bash
# Scaffold a library: tools/scripts/new-lib.sh <dir under libs> <project name> <scope> <type>
set -euo pipefail
dir="libs/$1"; name="$2"; scope="$3"; type="$4"
depth=$(echo "$dir" | awk -F/ '{print NF}'); up=$(printf '../%.0s' $(seq 1 "$depth"))
mkdir -p "$dir/src"
cat > "$dir/project.json" <<JSON
{
  "name": "$name",
  "\$schema": "${up}node_modules/nx/schemas/project-schema.json",
  "sourceRoot": "$dir/src",
  "projectType": "library",
  "tags": ["scope:$scope", "type:$type"],
  "targets": {
    "typecheck": { "command": "tsc --noEmit -p $dir/tsconfig.json" }
  }
}
JSON
cat > "$dir/tsconfig.json" <<JSON
{
  "extends": "${up}tsconfig.base.json",
  "include": ["src/**/*.ts", "test/**/*.ts"]
}
JSON
cat > "$dir/jest.config.mjs" <<JS
import preset from '${up}jest.preset.mjs';

export default { ...preset, displayName: '$name', rootDir: '.', testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'] };
JS
[ -f "$dir/src/index.ts" ] || echo "export {};" > "$dir/src/index.ts"
# Register the alias @gatehouse/<name> where TypeScript (tsconfig.base.json) and swc (.swcrc) resolve it.
node --input-type=module - "$name" "$dir" <<'NODE'
import { readFileSync, writeFileSync } from 'node:fs';
const [name, dir] = process.argv.slice(2);
const alias = `@gatehouse/${name}`;
const target = [`./${dir}/src/index.ts`];
for (const [file, at] of [['tsconfig.base.json', (j) => j.compilerOptions], ['.swcrc', (j) => j.jsc]]) {
  const json = JSON.parse(readFileSync(file, 'utf8'));
  const opts = at(json);
  opts.paths ??= {};
  if (opts.paths[alias]) continue;
  opts.paths[alias] = target;
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  process.stdout.write(`${file}: ${alias} -> ${target[0]}\n`);
}
NODE
npx prettier --write tsconfig.base.json .swcrc "$dir" > /dev/null
echo "created $dir as $name (import it as @gatehouse/$name)"
