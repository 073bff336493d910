// C side of rxvault's attachment validators and preview writer.
//
// libpng reports errors by longjmp, which must never cross Swift frames, so every libpng call
// sits in one C function that owns its setjmp. poppler-glib is driven from C too, so that one
// fuzz harness (Fuzz/) exercises exactly the code the vault runs. These functions parse
// untrusted bytes: rxvault calls them only in a child process with resource limits.
#ifndef RX_VALIDATE_H
#define RX_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#define RX_MESSAGE_SIZE 256

typedef struct {
    uint32_t max_width;          // per side, pixels
    uint32_t max_height;
    uint64_t max_pixels;         // width * height
    size_t max_chunk_bytes;      // decompressed ancillary chunk data (zTXt, iCCP...)
} rx_png_limits;

typedef struct {
    uint32_t width;
    uint32_t height;
    int bit_depth;
    int color_type;
    int interlaced;
    char message[RX_MESSAGE_SIZE];   // why it was refused, when it was
} rx_png_result;

// Decodes every row of the PNG in `data` in strict mode (CRC errors fatal, benign errors off,
// any warning a refusal, read through IEND, nothing after IEND). Returns 0 when the image is
// valid. When `rgba` is not NULL, also returns the image as 8-bit RGBA rows (width * 4 bytes
// each), malloc'ed, to be freed by the caller.
int rx_png_check(const uint8_t *data, size_t length, const rx_png_limits *limits,
                 rx_png_result *result, uint8_t **rgba);

// Inflates one zlib stream (a zTXt, compressed iTXt or iCCP chunk's payload) without keeping the
// output, to learn its size before libpng allocates it. Returns the decompressed size, or
// `limit` + 1 as soon as it would exceed `limit`, or -1 when the stream is damaged or ends early.
int64_t rx_zlib_inflated_size(const uint8_t *data, size_t length, uint64_t limit);

// Encodes RGBA pixels (8 bits per channel, rows of width * 4 bytes) as a PNG into a malloc'ed
// buffer. Returns 0 on success.
int rx_png_encode_rgba(const uint8_t *rgba, uint32_t width, uint32_t height,
                       uint8_t **out, size_t *out_length, char message[RX_MESSAGE_SIZE]);

// Phone photos (photo.c): JPEG (libjpeg-turbo) and HEIC (libheif) decoded to 8-bit RGB rows
// (width * 3 bytes each), turned upright and scaled so the longest side is at most
// `target_side` (0 keeps every pixel). Only pixels come out: no metadata of the original.
typedef struct {
    uint32_t max_side;           // per side, pixels, of the stored image (before scaling)
    uint64_t max_pixels;         // width * height, before scaling
    uint64_t max_decoder_bytes;  // libjpeg's cap on its whole-image buffers
    int max_scans;               // most scans of a progressive JPEG
    uint32_t target_side;        // longest side of the result; 0: no scaling
} rx_photo_limits;

enum rx_photo_status {
    RX_PHOTO_OK = 0,
    RX_PHOTO_CORRUPT = 1,        // damaged, truncated, or not what its header says
    RX_PHOTO_LIMIT = 2,          // over a size, scan or memory limit
    RX_PHOTO_UNSUPPORTED = 3,    // a kind the decoder (or rxvault) does not convert
};

typedef struct {
    uint32_t source_width;       // as the file declares it
    uint32_t source_height;
    uint32_t width;              // of the RGB result, upright and scaled
    uint32_t height;
    int orientation;             // EXIF orientation applied (1: none); HEIC's boxes are applied by libheif
    int status;                  // rx_photo_status
    char message[RX_MESSAGE_SIZE];
} rx_photo_result;

// Both return 0 and a malloc'ed RGB buffer in *rgb (the caller frees it), or a status.
int rx_jpeg_decode(const uint8_t *data, size_t length, const rx_photo_limits *limits, rx_photo_result *result, uint8_t **rgb);
int rx_heif_decode(const uint8_t *data, size_t length, const rx_photo_limits *limits, rx_photo_result *result, uint8_t **rgb);

// The EXIF orientation (1..8) in an APP1 payload starting "Exif\0\0"; 1 when there is none.
int rx_exif_orientation(const uint8_t *app1, size_t length);

// Encodes RGB pixels (rows of width * 3 bytes) as a PNG with only IHDR, IDAT and IEND chunks.
int rx_png_encode_rgb(const uint8_t *rgb, uint32_t width, uint32_t height,
                      uint8_t **out, size_t *out_length, char message[RX_MESSAGE_SIZE]);

// Bounds of the object walk (rx_pdf_walk): what a hostile file can make qpdf do.
typedef struct {
    int max_objects;                   // indirect objects in one revision
    int max_revisions;                 // the file plus its incremental updates
    int max_depth;                     // nesting of arrays and dictionaries, and action chains
    uint64_t max_stream_bytes;         // decoded bytes of one stream
    uint64_t max_total_stream_bytes;   // decoded bytes of all streams together
} rx_pdf_walk_limits;

typedef struct {
    int max_pages;
    double max_page_points;      // largest page side accepted, in PDF points
    int render_pixels;           // longest side of the low-resolution check render
    rx_pdf_walk_limits walk;
} rx_pdf_limits;

typedef struct {
    int pages;
    double first_page_width;     // points
    double first_page_height;
    int refusal;                 // rx_pdf_refusal
    char message[RX_MESSAGE_SIZE];
    // Warnings qpdf gave while decoding a stream it decoded whole (a zlib stream without its
    // checksum): `qpdf --check` counts them as no error, so they are notes, not damage.
    int notes;                   // how many
    char note[RX_MESSAGE_SIZE];  // the first, with the object it was in
} rx_pdf_result;

enum rx_pdf_refusal {
    RX_PDF_OK = 0,
    RX_PDF_NOT_PDF = 1,          // no PDF header at offset 0
    RX_PDF_ENCRYPTED = 2,
    RX_PDF_ACTIVE_CONTENT = 3,   // JavaScript or launch actions
    RX_PDF_DAMAGED = 4,          // structure broken or repaired by poppler, or poppler reported errors
    RX_PDF_NO_PAGES = 5,
    RX_PDF_LIMIT = 6,            // too many pages, page too large, walk limits
    RX_PDF_EMBEDDED_FILE = 7,    // embedded files, file attachment annotations
    RX_PDF_NOT_ONLY_PDF = 8,     // the file is also something else (an HTML page)
};

// Puts the calling process in a seccomp sandbox (Linux, x86_64 and arm64): from then on it can
// read, write open descriptors, allocate, read files and make threads, but not open files for
// writing, create or delete files, make sockets, start processes or run programs (sandbox.c).
// Irreversible. Returns 0 when the filter is in place, else -1 and why in `message`.
#ifdef __cplusplus
extern "C" {
#endif
int rx_sandbox_enter(char message[RX_MESSAGE_SIZE]);

// Walks every object of the PDF with qpdf (C++, pdfwalk.cpp): object streams, every
// incremental update, decoded streams with bounded output. Refuses active content (JavaScript,
// XFA scripts, Launch, ImportData, SubmitForm, GoToR, GoToE, Rendition, rich media, a /URI or
// /Named action that runs by itself), links to files on the reader's side (by scheme, network
// path, or as resolved against the catalog's /URI /Base), layers that show different readers
// different content (pdfrules.cpp), embedded files and damage qpdf reports (recovery is off).
// Returns 0 when nothing was found; never throws.
int rx_pdf_walk(const uint8_t *data, size_t length, const rx_pdf_walk_limits *limits, rx_pdf_result *result);

#ifdef __cplusplus
}
#endif

// Opens the PDF with poppler (memory stream loader), renders every page at low resolution and
// checks for encryption, active content and damage. Returns 0 when the document is accepted.
int rx_pdf_check(const uint8_t *data, size_t length, const rx_pdf_limits *limits, rx_pdf_result *result);

// Renders the first page so that its width is `width` pixels, as RGBA rows (width * 4 bytes),
// malloc'ed. Only for documents rx_pdf_check accepted. Returns 0 on success.
int rx_pdf_render_first_page(const uint8_t *data, size_t length, uint32_t width,
                             uint8_t **rgba, uint32_t *out_width, uint32_t *out_height,
                             char message[RX_MESSAGE_SIZE]);

#endif
