#include <gio/gio.h>
#include <poppler.h>
#include <cairo.h>
#include <cairo-pdf.h>
#include <cairo-svg.h>
