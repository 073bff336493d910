// Phone photos (JPEG with libjpeg-turbo, HEIC with libheif) decoded to 8-bit RGB pixels, turned
// upright, scaled down, and nothing else: no marker, box or metadata of the original survives,
// because only the pixels leave these functions (photo.c's caller writes them as a new PNG).
//
// Like png.c, these parse untrusted bytes and run only in the isolated child. libjpeg reports
// errors by longjmp: every libjpeg call sits in rx_jpeg_decode, which owns the setjmp, and
// locals changed after it are volatile. libheif reports errors as values (and catches its own
// C++ exceptions), so it needs no jump.
#include "rx_validate.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <libheif/heif.h>

// ---- Shared: size checks, orientation, scaling ------------------------------------------------

static int over_limits(uint32_t width, uint32_t height, const rx_photo_limits *limits, rx_photo_result *result) {
    if (width == 0 || height == 0) {
        snprintf(result->message, RX_MESSAGE_SIZE, "the image is %ux%u pixels", width, height);
        result->status = RX_PHOTO_CORRUPT;
        return 1;
    }
    if (width > limits->max_side || height > limits->max_side) {
        snprintf(result->message, RX_MESSAGE_SIZE, "image is %ux%u: over the %u-pixel side limit", width, height, limits->max_side);
        result->status = RX_PHOTO_LIMIT;
        return 1;
    }
    if ((uint64_t)width * height > limits->max_pixels) {
        snprintf(result->message, RX_MESSAGE_SIZE, "image is %ux%u: over the %llu megapixel limit", width, height,
                 (unsigned long long)(limits->max_pixels / 1000000));
        result->status = RX_PHOTO_LIMIT;
        return 1;
    }
    return 0;
}

// The size after a box-filter scale that makes the longest side at most `target` (0: no scaling).
static void scaled_size(uint32_t width, uint32_t height, uint32_t target, uint32_t *out_w, uint32_t *out_h) {
    uint32_t longest = width > height ? width : height;
    if (target == 0 || longest <= target) { *out_w = width; *out_h = height; return; }
    double factor = (double)target / (double)longest;
    uint32_t w = (uint32_t)((double)width * factor + 0.5), h = (uint32_t)((double)height * factor + 0.5);
    *out_w = w ? w : 1;
    *out_h = h ? h : 1;
}

// Area-average downscale of RGB rows (never upscales). Returns a new buffer or NULL.
static uint8_t *box_scale(const uint8_t *rgb, uint32_t width, uint32_t height, uint32_t out_w, uint32_t out_h) {
    uint8_t *out = malloc((size_t)out_w * out_h * 3);
    if (!out) return NULL;
    for (uint32_t oy = 0; oy < out_h; oy++) {
        uint32_t y0 = (uint32_t)((uint64_t)oy * height / out_h), y1 = (uint32_t)((uint64_t)(oy + 1) * height / out_h);
        if (y1 <= y0) y1 = y0 + 1;
        for (uint32_t ox = 0; ox < out_w; ox++) {
            uint32_t x0 = (uint32_t)((uint64_t)ox * width / out_w), x1 = (uint32_t)((uint64_t)(ox + 1) * width / out_w);
            if (x1 <= x0) x1 = x0 + 1;
            uint64_t sum[3] = {0, 0, 0};
            for (uint32_t y = y0; y < y1; y++) {
                const uint8_t *p = rgb + ((size_t)y * width + x0) * 3;
                for (uint32_t x = x0; x < x1; x++, p += 3) { sum[0] += p[0]; sum[1] += p[1]; sum[2] += p[2]; }
            }
            uint64_t n = (uint64_t)(y1 - y0) * (x1 - x0);
            uint8_t *o = out + ((size_t)oy * out_w + ox) * 3;
            for (int c = 0; c < 3; c++) o[c] = (uint8_t)((sum[c] + n / 2) / n);
        }
    }
    return out;
}

// Applies EXIF orientation 1..8 (TIFF 6.0 tag 274: where row 0 and column 0 of the stored
// pixels belong). Returns a new buffer, its size in *out_w/*out_h, or NULL.
static uint8_t *orient(const uint8_t *rgb, uint32_t width, uint32_t height, int orientation, uint32_t *out_w, uint32_t *out_h) {
    int swap = orientation >= 5 && orientation <= 8;
    uint32_t w = swap ? height : width, h = swap ? width : height;
    uint8_t *out = malloc((size_t)w * h * 3);
    if (!out) return NULL;
    for (uint32_t y = 0; y < height; y++) {
        for (uint32_t x = 0; x < width; x++) {
            uint32_t dx, dy;
            switch (orientation) {
            case 2: dx = width - 1 - x; dy = y; break;                 // mirrored
            case 3: dx = width - 1 - x; dy = height - 1 - y; break;    // upside down
            case 4: dx = x; dy = height - 1 - y; break;                // flipped
            case 5: dx = y; dy = x; break;                             // transposed
            case 6: dx = height - 1 - y; dy = x; break;                // turned 90° clockwise to view
            case 7: dx = height - 1 - y; dy = width - 1 - x; break;    // transversed
            case 8: dx = y; dy = width - 1 - x; break;                 // turned 90° anticlockwise to view
            default: dx = x; dy = y; break;
            }
            memcpy(out + ((size_t)dy * w + dx) * 3, rgb + ((size_t)y * width + x) * 3, 3);
        }
    }
    *out_w = w;
    *out_h = h;
    return out;
}

// Scales then orients `rgb` (which it frees) into result; 0 on success.
static int finish(uint8_t *rgb, uint32_t width, uint32_t height, int orientation, const rx_photo_limits *limits,
                  rx_photo_result *result, uint8_t **out) {
    uint32_t sw, sh;
    scaled_size(width, height, limits->target_side, &sw, &sh);
    if (sw != width || sh != height) {
        uint8_t *scaled = box_scale(rgb, width, height, sw, sh);
        free(rgb);
        if (!scaled) goto memory;
        rgb = scaled;
    }
    if (orientation >= 2 && orientation <= 8) {
        uint32_t ow, oh;
        uint8_t *turned = orient(rgb, sw, sh, orientation, &ow, &oh);
        free(rgb);
        if (!turned) goto memory;
        rgb = turned;
        sw = ow;
        sh = oh;
    }
    result->width = sw;
    result->height = sh;
    result->orientation = orientation >= 1 && orientation <= 8 ? orientation : 1;
    *out = rgb;
    result->status = RX_PHOTO_OK;
    return 0;
memory:
    snprintf(result->message, RX_MESSAGE_SIZE, "out of memory");
    result->status = RX_PHOTO_LIMIT;
    return result->status;
}

// ---- EXIF orientation -------------------------------------------------------------------------

// Reads tag 274 (Orientation) from IFD0 of an APP1 "Exif\0\0" payload; 1 when absent or odd.
// Every offset is checked against the payload: it comes from the file.
int rx_exif_orientation(const uint8_t *app1, size_t length) {
    if (length < 6 + 8 || memcmp(app1, "Exif\0\0", 6) != 0) return 1;
    const uint8_t *tiff = app1 + 6;
    size_t size = length - 6;
    int little;
    if (tiff[0] == 'I' && tiff[1] == 'I') little = 1;
    else if (tiff[0] == 'M' && tiff[1] == 'M') little = 0;
    else return 1;
#define U16(p) (little ? (uint32_t)(p)[0] | (uint32_t)(p)[1] << 8 : (uint32_t)(p)[0] << 8 | (uint32_t)(p)[1])
#define U32(p) (little ? (uint32_t)(p)[0] | (uint32_t)(p)[1] << 8 | (uint32_t)(p)[2] << 16 | (uint32_t)(p)[3] << 24 \
                       : (uint32_t)(p)[0] << 24 | (uint32_t)(p)[1] << 16 | (uint32_t)(p)[2] << 8 | (uint32_t)(p)[3])
    if (U16(tiff + 2) != 42) return 1;
    uint32_t ifd = U32(tiff + 4);
    if (ifd > size || size - ifd < 2) return 1;
    uint32_t count = U16(tiff + ifd);
    for (uint32_t i = 0; i < count; i++) {
        size_t entry = (size_t)ifd + 2 + (size_t)i * 12;
        if (entry + 12 > size) return 1;
        const uint8_t *e = tiff + entry;
        if (U16(e) == 274) {
            uint32_t type = U16(e + 2), n = U32(e + 4);
            if (type != 3 || n != 1) return 1;   // SHORT, one value, stored in the entry itself
            uint32_t value = U16(e + 8);
            return value >= 1 && value <= 8 ? (int)value : 1;
        }
    }
    return 1;
#undef U16
#undef U32
}

// ---- JPEG (libjpeg-turbo) ---------------------------------------------------------------------

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char *message;
    int warnings;
    int max_scans;
    struct jpeg_progress_mgr progress;
} jpeg_guard;

static void jpeg_on_error(j_common_ptr cinfo) {
    jpeg_guard *guard = (jpeg_guard *)cinfo->err;
    char text[JMSG_LENGTH_MAX];
    guard->pub.format_message(cinfo, text);
    snprintf(guard->message, RX_MESSAGE_SIZE, "%s", text);
    longjmp(guard->jump, 1);
}

// Strict, as for PNG: a warning ("Premature end of JPEG file", "Corrupt JPEG data") means the
// decoder met damage and made pixels up. The first one is kept; the image is refused afterwards.
static void jpeg_on_message(j_common_ptr cinfo, int level) {
    jpeg_guard *guard = (jpeg_guard *)cinfo->err;
    if (level >= 0) return;   // trace messages
    if (guard->warnings++ == 0) {
        char text[JMSG_LENGTH_MAX];
        guard->pub.format_message(cinfo, text);
        snprintf(guard->message, RX_MESSAGE_SIZE, "%s", text);
    }
}

// A progressive JPEG can hold thousands of tiny scans, each a pass over the whole image: the
// known way to make a few KB cost minutes of CPU. libjpeg-turbo's own tools stop at 500 scans.
static void jpeg_on_progress(j_common_ptr cinfo) {
    jpeg_guard *guard = (jpeg_guard *)cinfo->err;
    if (cinfo->is_decompressor) {
        j_decompress_ptr d = (j_decompress_ptr)cinfo;
        if (d->input_scan_number > guard->max_scans) {
            snprintf(guard->message, RX_MESSAGE_SIZE, "JPEG has more than %d scans", guard->max_scans);
            guard->warnings = -1000000;   // marks the limit for the caller
            longjmp(guard->jump, 1);
        }
    }
}

int rx_jpeg_decode(const uint8_t *data, size_t length, const rx_photo_limits *limits, rx_photo_result *result, uint8_t **rgb) {
    memset(result, 0, sizeof *result);
    *rgb = NULL;
    if (length < 4 || data[0] != 0xFF || data[1] != 0xD8 || data[2] != 0xFF) {
        snprintf(result->message, RX_MESSAGE_SIZE, "no JPEG signature");
        result->status = RX_PHOTO_CORRUPT;
        return result->status;
    }
    struct jpeg_decompress_struct cinfo;
    jpeg_guard guard;
    memset(&guard, 0, sizeof guard);
    guard.message = result->message;
    guard.max_scans = limits->max_scans > 0 ? limits->max_scans : 500;
    cinfo.err = jpeg_std_error(&guard.pub);
    guard.pub.error_exit = jpeg_on_error;
    guard.pub.emit_message = jpeg_on_message;
    uint8_t *volatile pixels = NULL;
    volatile int created = 0;
    if (setjmp(guard.jump)) {
        result->status = guard.warnings < 0 ? RX_PHOTO_LIMIT
            : strstr(result->message, "nsupported") || strstr(result->message, "olor conversion") ? RX_PHOTO_UNSUPPORTED
            : strstr(result->message, "nsufficient memory") || strstr(result->message, "acking store") ? RX_PHOTO_LIMIT
            : RX_PHOTO_CORRUPT;
        if (created) jpeg_destroy_decompress(&cinfo);
        free((void *)pixels);
        return result->status;
    }
    jpeg_create_decompress(&cinfo);
    created = 1;
    // Whole-image buffers (progressive and multi-scan files keep all coefficients) are
    // allocated through this cap; libjpeg-turbo has no backing store, so over it is an error.
    cinfo.mem->max_memory_to_use = limits->max_decoder_bytes;
    guard.progress.progress_monitor = jpeg_on_progress;
    cinfo.progress = &guard.progress;
    jpeg_mem_src(&cinfo, data, (unsigned long)length);
    jpeg_save_markers(&cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_read_header(&cinfo, TRUE);
    result->source_width = cinfo.image_width;
    result->source_height = cinfo.image_height;
    if (over_limits(cinfo.image_width, cinfo.image_height, limits, result)) {
        jpeg_destroy_decompress(&cinfo);
        return result->status;
    }
    int orientation = 1;
    for (jpeg_saved_marker_ptr marker = cinfo.marker_list; marker; marker = marker->next) {
        if (marker->marker == JPEG_APP0 + 1 && marker->data_length >= 6 && memcmp(marker->data, "Exif\0\0", 6) == 0) {
            orientation = rx_exif_orientation(marker->data, marker->data_length);
            break;
        }
    }
    if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
        snprintf(result->message, RX_MESSAGE_SIZE, "a CMYK JPEG (from print software, not a camera) is not converted");
        result->status = RX_PHOTO_UNSUPPORTED;
        jpeg_destroy_decompress(&cinfo);
        return result->status;
    }
    cinfo.out_color_space = JCS_RGB;
    // Let the decoder scale by n/8 in the DCT (cheap) to the smallest size still at least the
    // target; the box filter does the rest.
    if (limits->target_side > 0) {
        uint32_t longest = cinfo.image_width > cinfo.image_height ? cinfo.image_width : cinfo.image_height;
        unsigned n = 8;
        while (n > 1 && (uint64_t)longest * (n - 1) / 8 >= limits->target_side) n--;
        cinfo.scale_num = n;
        cinfo.scale_denom = 8;
    }
    jpeg_start_decompress(&cinfo);
    uint32_t w = cinfo.output_width, h = cinfo.output_height;
    if (cinfo.output_components != 3 || w == 0 || h == 0) {
        snprintf(result->message, RX_MESSAGE_SIZE, "unexpected decoder output (%d components)", cinfo.output_components);
        longjmp(guard.jump, 1);
    }
    pixels = malloc((size_t)w * h * 3);
    if (!pixels) {
        snprintf(result->message, RX_MESSAGE_SIZE, "out of memory");
        guard.warnings = -1000000;
        longjmp(guard.jump, 1);
    }
    while (cinfo.output_scanline < h) {
        JSAMPROW row = (JSAMPROW)((uint8_t *)pixels + (size_t)cinfo.output_scanline * w * 3);
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    created = 0;
    if (guard.warnings > 0) {
        result->status = RX_PHOTO_CORRUPT;   // the message holds the first warning
        free((void *)pixels);
        return result->status;
    }
    return finish((uint8_t *)pixels, w, h, orientation, limits, result, rgb);
}

// ---- HEIC (libheif) ---------------------------------------------------------------------------

int rx_heif_decode(const uint8_t *data, size_t length, const rx_photo_limits *limits, rx_photo_result *result, uint8_t **rgb) {
    memset(result, 0, sizeof *result);
    *rgb = NULL;
    if (length < 12 || length > 0x7fffffff || heif_check_filetype(data, 12) == heif_filetype_no) {
        snprintf(result->message, RX_MESSAGE_SIZE, "no HEIF file type box");
        result->status = RX_PHOTO_CORRUPT;
        return result->status;
    }
    struct heif_context *context = heif_context_alloc();
    struct heif_image_handle *handle = NULL;
    struct heif_image *image = NULL;
    struct heif_decoding_options *options = NULL;
    uint8_t *pixels = NULL;
    if (!context) { snprintf(result->message, RX_MESSAGE_SIZE, "out of memory"); result->status = RX_PHOTO_LIMIT; return result->status; }
    heif_context_set_maximum_image_size_limit(context, (int)limits->max_side);
    struct heif_error error = heif_context_read_from_memory_without_copy(context, data, length, NULL);
    if (error.code != heif_error_Ok) goto failed;
    error = heif_context_get_primary_image_handle(context, &handle);
    if (error.code != heif_error_Ok) goto failed;
    // The size after libheif's transformations (rotation swaps the sides).
    uint32_t declared_w = (uint32_t)heif_image_handle_get_width(handle), declared_h = (uint32_t)heif_image_handle_get_height(handle);
    result->source_width = declared_w;
    result->source_height = declared_h;
    if (over_limits(declared_w, declared_h, limits, result)) goto done;
    options = heif_decoding_options_alloc();
    if (!options) { snprintf(result->message, RX_MESSAGE_SIZE, "out of memory"); result->status = RX_PHOTO_LIMIT; goto done; }
    // HEIF's rotation and mirroring are boxes (irot, imir) that libheif applies: the spec says a
    // reader follows them and ignores any EXIF orientation, which phones set to 1 anyway.
    options->ignore_transformations = 0;
    options->convert_hdr_to_8bit = 1;
    options->strict_decoding = 1;
    error = heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGB, options);
    if (error.code != heif_error_Ok) goto failed;
    int stride = 0;
    const uint8_t *plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
    int iw = heif_image_get_width(image, heif_channel_interleaved), ih = heif_image_get_height(image, heif_channel_interleaved);
    if (!plane || iw <= 0 || ih <= 0 || stride < iw * 3 || heif_image_get_bits_per_pixel(image, heif_channel_interleaved) != 24) {
        snprintf(result->message, RX_MESSAGE_SIZE, "unexpected decoder output");
        result->status = RX_PHOTO_CORRUPT;
        goto done;
    }
    if (over_limits((uint32_t)iw, (uint32_t)ih, limits, result)) goto done;
    pixels = malloc((size_t)iw * ih * 3);
    if (!pixels) { snprintf(result->message, RX_MESSAGE_SIZE, "out of memory"); result->status = RX_PHOTO_LIMIT; goto done; }
    for (int y = 0; y < ih; y++) memcpy(pixels + (size_t)y * iw * 3, plane + (size_t)y * stride, (size_t)iw * 3);
    heif_image_release(image);
    image = NULL;
    heif_image_handle_release(handle);
    handle = NULL;
    heif_decoding_options_free(options);
    options = NULL;
    heif_context_free(context);
    context = NULL;
    uint8_t *taken = pixels;
    pixels = NULL;
    return finish(taken, (uint32_t)iw, (uint32_t)ih, 1, limits, result, rgb);

failed:
    snprintf(result->message, RX_MESSAGE_SIZE, "%s", error.message ? error.message : "cannot decode");
    // libheif's messages can end in a newline or carry one between parts: one line, no controls.
    for (char *p = result->message; *p; p++) if ((unsigned char)*p < 0x20) *p = ' ';
    for (size_t n = strlen(result->message); n > 0 && result->message[n - 1] == ' '; n--) result->message[n - 1] = 0;
    result->status = error.code == heif_error_Memory_allocation_error ? RX_PHOTO_LIMIT
        : error.code == heif_error_Unsupported_feature || error.code == heif_error_Unsupported_filetype ? RX_PHOTO_UNSUPPORTED
        : RX_PHOTO_CORRUPT;
    // libheif reports its own size limit as a usage/security error: say it as ours.
    if (strstr(result->message, "exceeds the maximum") || strstr(result->message, "limit")) result->status = RX_PHOTO_LIMIT;
done:
    free(pixels);
    if (image) heif_image_release(image);
    if (handle) heif_image_handle_release(handle);
    if (options) heif_decoding_options_free(options);
    if (context) heif_context_free(context);
    return result->status;
}
