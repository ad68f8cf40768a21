/* The harness of test/cov/shapes_test.py: libyaml's parser over one input, as a
 * libFuzzer-style LLVMFuzzerTestOneInput. The same function is linked into every harness
 * shape the test builds (its own main, libFuzzer's main, ptcall's fuzz driver, AFL++'s
 * persistent loop), so their per-input function sets must all equal llvm-cov's. */
#include <stddef.h>
#include <stdint.h>

#include "yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return 0;
    yaml_parser_set_input_string(&parser, data, size);
    /* documents until the stream ends or an error */
    for (int done = 0; !done;) {
        if (!yaml_parser_load(&parser, &doc))
            break;
        done = !yaml_document_get_root_node(&doc);
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    return 0;
}
