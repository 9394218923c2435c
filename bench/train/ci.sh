# The train family in ci/ (roles: ci/families.sh).
ci_roles=(aa-ab calibrate gpu-smoke)
