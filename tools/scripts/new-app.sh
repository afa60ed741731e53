#!/usr/bin/env bash
# Scaffold an application project: tools/scripts/new-app.sh <name>
set -euo pipefail
name="$1"; dir="apps/$name"
mkdir -p "$dir/src" "$dir/test"
cat > "$dir/project.json" <<JSON
{
  "name": "$name",
  "\$schema": "../../node_modules/nx/schemas/project-schema.json",
  "sourceRoot": "$dir/src",
  "projectType": "application",
  "tags": ["scope:$name", "type:app"],
  "targets": {
    "build": {
      "command": "rm -rf dist/apps/$name && swc $dir/src libs -d dist/apps/$name --config-file .swcrc --ignore '**/*.spec.ts' --only '**/*.ts' -q",
      "inputs": ["production", "^production", "{workspaceRoot}/.swcrc"],
      "outputs": ["{workspaceRoot}/dist/apps/$name"],
      "cache": true
    },
    "serve": {
      "command": "node dist/apps/$name/$dir/src/main.js",
      "dependsOn": ["build"],
      "continuous": true
    },
    "migrate": {
      "command": "node dist/apps/$name/$dir/src/migrate.js",
      "dependsOn": ["build"]
    },
    "typecheck": { "command": "tsc --noEmit -p $dir/tsconfig.json" }
  }
}
JSON
cat > "$dir/tsconfig.json" <<JSON
{
  "extends": "../../tsconfig.base.json",
  "include": ["src/**/*.ts", "test/**/*.ts"]
}
JSON
cat > "$dir/jest.config.mjs" <<JS
import preset from '../../jest.preset.mjs';

export default { ...preset, displayName: '$name', rootDir: '.', testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'] };
JS
