#!/bin/sh
exec kvmaictl hook qemu -- "$@"
