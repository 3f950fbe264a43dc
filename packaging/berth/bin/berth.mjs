#!/usr/bin/env node
// The user-facing package `berth` only names the command: @berth/cli is it.
import "@berth/cli/bin/berth.mjs";
