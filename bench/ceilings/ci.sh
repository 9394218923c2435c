# The ceilings family in ci/ (roles: ci/families.sh).
ci_roles=(calibrate)
