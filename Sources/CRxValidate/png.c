// PNG validation and writing with libpng. Every libpng call is inside a function that owns the
// setjmp; locals changed after setjmp are volatile and freed on the longjmp path too.
#include "rx_validate.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct {
    const uint8_t *data;
    size_t length;
    size_t offset;
    char *message;
    int warnings;
} reader_state;

static void on_error(png_structp png, png_const_charp text) {
    reader_state *state = (reader_state *)png_get_error_ptr(png);
    if (state && state->message) snprintf(state->message, RX_MESSAGE_SIZE, "%s", text);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp text) {
    // Strict mode: a warning means libpng met something wrong and carried on (a bad ancillary
    // CRC, an adler32 mismatch, an oversized chunk). Remember the first and refuse afterwards.
    reader_state *state = (reader_state *)png_get_error_ptr(png);
    if (state && state->warnings++ == 0 && state->message) snprintf(state->message, RX_MESSAGE_SIZE, "%s", text);
}

static void on_read(png_structp png, png_bytep out, size_t count) {
    reader_state *state = (reader_state *)png_get_io_ptr(png);
    if (count > state->length - state->offset) {
        snprintf(state->message, RX_MESSAGE_SIZE, "file ends early (truncated)");
        png_longjmp(png, 1);
    }
    memcpy(out, state->data + state->offset, count);
    state->offset += count;
}

int rx_png_check(const uint8_t *data, size_t length, const rx_png_limits *limits,
                 rx_png_result *result, uint8_t **rgba) {
    memset(result, 0, sizeof *result);
    if (rgba) *rgba = NULL;
    if (length < 8 || png_sig_cmp(data, 0, 8) != 0) {
        snprintf(result->message, RX_MESSAGE_SIZE, "no PNG signature");
        return 1;
    }
    reader_state state = { data, length, 0, result->message, 0 };
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &state, on_error, on_warning);
    if (!png) { snprintf(result->message, RX_MESSAGE_SIZE, "out of memory"); return 1; }
    png_infop info = png_create_info_struct(png);
    png_infop end_info = png_create_info_struct(png);
    volatile png_bytep row = NULL;
    volatile png_bytep pixels = NULL;
    volatile int status = 1;
    if (!info || !end_info) { snprintf(result->message, RX_MESSAGE_SIZE, "out of memory"); goto done; }

    if (setjmp(png_jmpbuf(png))) {
        // An error longjmp'ed here; the message is already set.
        status = 1;
        goto done;
    }
    png_set_read_fn(png, &state, on_read);
    png_set_benign_errors(png, 0);
    png_set_crc_action(png, PNG_CRC_DEFAULT, PNG_CRC_ERROR_QUIT);
    png_set_user_limits(png, limits->max_width, limits->max_height);
    png_set_chunk_malloc_max(png, limits->max_chunk_bytes);
    png_set_chunk_cache_max(png, 1000);
    png_read_info(png, info);

    png_uint_32 width = 0, height = 0;
    int bit_depth = 0, color_type = 0, interlace = 0;
    png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, &interlace, NULL, NULL);
    result->width = width;
    result->height = height;
    result->bit_depth = bit_depth;
    result->color_type = color_type;
    result->interlaced = interlace != PNG_INTERLACE_NONE;
    if ((uint64_t)width * (uint64_t)height > limits->max_pixels) {
        snprintf(result->message, RX_MESSAGE_SIZE, "pixel limit");
        status = 2;
        goto done;
    }

    // Normalise to 8-bit RGBA, so every row is decoded the same way and a preview can use it.
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (bit_depth == 16) png_set_strip_16(png);
    if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    png_set_filler(png, 0xff, PNG_FILLER_AFTER);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t rowbytes = png_get_rowbytes(png, info);
    if (rowbytes != (size_t)width * 4) {
        snprintf(result->message, RX_MESSAGE_SIZE, "unexpected row size");
        goto done;
    }
    if (rgba) {
        pixels = malloc(rowbytes * height);
        if (!pixels) { snprintf(result->message, RX_MESSAGE_SIZE, "out of memory"); goto done; }
        memset((void *)pixels, 0, rowbytes * height);
    } else {
        row = malloc(rowbytes);
        if (!row) { snprintf(result->message, RX_MESSAGE_SIZE, "out of memory"); goto done; }
    }
    for (int pass = 0; pass < passes; pass++) {
        for (png_uint_32 y = 0; y < height; y++) {
            png_bytep target = pixels ? (png_bytep)pixels + (size_t)y * rowbytes : (png_bytep)row;
            png_read_row(png, target, NULL);
        }
    }
    png_read_end(png, end_info);
    if (state.warnings > 0) {
        status = 3;  // the message holds the first warning
        goto done;
    }
    if (state.offset != length) {
        snprintf(result->message, RX_MESSAGE_SIZE, "%zu bytes of data after the end of the image", length - state.offset);
        status = 4;
        goto done;
    }
    status = 0;

done:
    png_destroy_read_struct(&png, info ? &info : NULL, end_info ? &end_info : NULL);
    free((void *)row);
    if (status == 0 && rgba) {
        *rgba = (uint8_t *)pixels;
    } else {
        free((void *)pixels);
    }
    return status;
}

typedef struct {
    uint8_t *data;
    size_t length;
    size_t capacity;
    int failed;
} writer_state;

static void on_write(png_structp png, png_bytep bytes, size_t count) {
    writer_state *state = (writer_state *)png_get_io_ptr(png);
    if (state->length + count > state->capacity) {
        size_t capacity = state->capacity ? state->capacity * 2 : 65536;
        while (capacity < state->length + count) capacity *= 2;
        uint8_t *grown = realloc(state->data, capacity);
        if (!grown) { state->failed = 1; png_error(png, "out of memory"); }
        state->data = grown;
        state->capacity = capacity;
    }
    memcpy(state->data + state->length, bytes, count);
    state->length += count;
}

static void on_flush(png_structp png) { (void)png; }

static void on_write_error(png_structp png, png_const_charp text) {
    char *message = (char *)png_get_error_ptr(png);
    if (message) snprintf(message, RX_MESSAGE_SIZE, "%s", text);
    png_longjmp(png, 1);
}

static void on_write_warning(png_structp png, png_const_charp text) { (void)png; (void)text; }

static int encode(const uint8_t *pixels, uint32_t width, uint32_t height, int channels,
                  uint8_t **out, size_t *out_length, char message[RX_MESSAGE_SIZE]) {
    *out = NULL;
    *out_length = 0;
    message[0] = 0;
    if (width == 0 || height == 0) { snprintf(message, RX_MESSAGE_SIZE, "empty image"); return 1; }
    writer_state state = { NULL, 0, 0, 0 };
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, message, on_write_error, on_write_warning);
    if (!png) { snprintf(message, RX_MESSAGE_SIZE, "out of memory"); return 1; }
    png_infop info = png_create_info_struct(png);
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, info ? &info : NULL);
        free(state.data);
        if (!message[0]) snprintf(message, RX_MESSAGE_SIZE, "cannot encode the PNG");
        return 1;
    }
    png_set_write_fn(png, &state, on_write, on_flush);
    png_set_IHDR(png, info, width, height, 8, channels == 4 ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (uint32_t y = 0; y < height; y++) png_write_row(png, (png_const_bytep)(pixels + (size_t)y * width * channels));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    *out = state.data;
    *out_length = state.length;
    return 0;
}

int rx_png_encode_rgba(const uint8_t *rgba, uint32_t width, uint32_t height,
                       uint8_t **out, size_t *out_length, char message[RX_MESSAGE_SIZE]) {
    return encode(rgba, width, height, 4, out, out_length, message);
}

int rx_png_encode_rgb(const uint8_t *rgb, uint32_t width, uint32_t height,
                      uint8_t **out, size_t *out_length, char message[RX_MESSAGE_SIZE]) {
    return encode(rgb, width, height, 3, out, out_length, message);
}

int64_t rx_zlib_inflated_size(const uint8_t *data, size_t length, uint64_t limit) {
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (inflateInit(&stream) != Z_OK) return -1;
    uint8_t scratch[16384];
    uint64_t total = 0;
    int status = Z_OK;
    size_t offset = 0;
    while (status == Z_OK) {
        if (stream.avail_in == 0 && offset < length) {
            size_t piece = length - offset > 1u << 30 ? 1u << 30 : length - offset;
            stream.next_in = (Bytef *)(data + offset);
            stream.avail_in = (uInt)piece;
            offset += piece;
        }
        stream.next_out = scratch;
        stream.avail_out = sizeof scratch;
        status = inflate(&stream, Z_NO_FLUSH);
        total += sizeof scratch - stream.avail_out;
        if (total > limit) { inflateEnd(&stream); return (int64_t)limit + 1; }
        // No progress: more input to feed goes on; otherwise the stream ends early.
        if (status == Z_BUF_ERROR) status = stream.avail_in == 0 && offset < length ? Z_OK : Z_DATA_ERROR;
    }
    inflateEnd(&stream);
    return status == Z_STREAM_END ? (int64_t)total : -1;
}
