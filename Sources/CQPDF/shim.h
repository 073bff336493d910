// qpdf's C API. The object walk itself (CRxValidate/pdfwalk.cpp) uses qpdf's C++ API, which
// can bound decoded stream output with a Pipeline; this module brings in the library and its
// pkg-config flags.
#include <qpdf/qpdf-c.h>
