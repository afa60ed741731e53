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
