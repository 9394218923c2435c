// The main() every gtb-<family> binary shares.
#include "harness/gtb.h"

#ifndef GTB_FAMILY_NAME
#error "GTB_FAMILY_NAME must name the family"
#endif

int main(int argc, char** argv) { return gtb::family_main(argc, argv, GTB_FAMILY_NAME); }
