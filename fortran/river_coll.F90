! river_coll.F90 - submodule river_coll_impl of module river: record schemas
! (river/schema.h), single-disk collections (river/collection.h),
! gensort records and CRC32C. Each call passes its handle's c_ptr to C;
! the create and open calls build C's river_coll_opts (coll_opts_c) from
! their optional arguments, with NUL-terminated copies of the strings
! that live for the call. Parallel collections are in river_pcoll.F90.
submodule (river) river_coll_impl
  implicit none

  ! C's river_coll_opts, built from optional arguments; the label points
  ! into a NUL-terminated copy that lives for the call.
  type, bind(C) :: coll_opts_c
    integer(c_size_t) :: block_size = 0
    integer(c_int) :: direct_io = 0
    type(c_ptr) :: label = c_null_ptr
  end type coll_opts_c

  ! coll_opts_c must be the size of C's river_coll_opts (see layout_ok in
  ! river).
  integer, parameter :: opts_layout_ok = 1 / merge(1, 0, &
      c_sizeof(coll_opts_c()) == RIVER__SIZEOF_COLL_OPTS)

  interface
    ! river/schema.h
    function river_schema_parse_c(text, out) bind(C, name='river_schema_parse')
      import :: c_int, c_char, c_ptr
      character(kind=c_char), intent(in) :: text(*)
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_schema_parse_c
    end function river_schema_parse_c
    function river_schema_create_default_c(out) &
        bind(C, name='river_schema_create_default')
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_schema_create_default_c
    end function river_schema_create_default_c
    function river_schema_clone_c(s, out) bind(C, name='river_schema_clone')
      import :: c_int, c_ptr
      type(c_ptr), value :: s
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_schema_clone_c
    end function river_schema_clone_c
    subroutine river_schema_destroy_c(s) bind(C, name='river_schema_destroy')
      import :: c_ptr
      type(c_ptr), value :: s
    end subroutine river_schema_destroy_c
    function river_schema_record_size_c(s, size) &
        bind(C, name='river_schema_record_size')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t), intent(out) :: size
      integer(c_int) :: river_schema_record_size_c
    end function river_schema_record_size_c
    function river_schema_nfields_c(s, n) bind(C, name='river_schema_nfields')
      import :: c_int, c_ptr
      type(c_ptr), value :: s
      integer(c_int), intent(out) :: n
      integer(c_int) :: river_schema_nfields_c
    end function river_schema_nfields_c
    function river_schema_field_c(s, i, name, type, count, offset) &
        bind(C, name='river_schema_field')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_int), value :: i
      type(c_ptr), intent(out) :: name
      integer(c_int), intent(out) :: type
      integer(c_size_t), intent(out) :: count, offset
      integer(c_int) :: river_schema_field_c
    end function river_schema_field_c
    function river_schema_key_c(s, field, offset, size) &
        bind(C, name='river_schema_key')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_int), intent(out) :: field
      integer(c_size_t), intent(out) :: offset, size
      integer(c_int) :: river_schema_key_c
    end function river_schema_key_c
    function river_schema_find_c(s, name, field) &
        bind(C, name='river_schema_find')
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: s
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: field
      integer(c_int) :: river_schema_find_c
    end function river_schema_find_c
    function river_schema_format_c(s, buf, len) &
        bind(C, name='river_schema_format')
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: s
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: river_schema_format_c
    end function river_schema_format_c
    function river_schema_equal_c(a, b, equal) &
        bind(C, name='river_schema_equal')
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
      integer(c_int), intent(out) :: equal
      integer(c_int) :: river_schema_equal_c
    end function river_schema_equal_c
    function river_schema_compare_c(s, a, b, cmp) &
        bind(C, name='river_schema_compare')
      import :: c_int, c_ptr
      type(c_ptr), value :: s
      type(*), intent(in) :: a, b
      integer(c_int), intent(out) :: cmp
      integer(c_int) :: river_schema_compare_c
    end function river_schema_compare_c
    function river_type_name_c(type) bind(C, name='river_type_name')
      import :: c_int, c_ptr
      integer(c_int), value :: type
      type(c_ptr) :: river_type_name_c
    end function river_type_name_c
    ! river/collection.h
    function river_coll_create_c(path, record_size, opts, out) &
        bind(C, name='river_coll_create')
      import :: c_int, c_char, c_size_t, c_ptr, coll_opts_c
      character(kind=c_char), intent(in) :: path(*)
      integer(c_size_t), value :: record_size
      type(coll_opts_c), intent(in) :: opts
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_coll_create_c
    end function river_coll_create_c
    function river_coll_append_c(c, records, nrecords) &
        bind(C, name='river_coll_append')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: c
      type(*), intent(in) :: records(*)
      integer(c_size_t), value :: nrecords
      integer(c_int) :: river_coll_append_c
    end function river_coll_append_c
    function river_coll_commit_c(c) bind(C, name='river_coll_commit')
      import :: c_int, c_ptr
      type(c_ptr), value :: c
      integer(c_int) :: river_coll_commit_c
    end function river_coll_commit_c
    function river_coll_open_c(path, record_size, opts, out) &
        bind(C, name='river_coll_open')
      import :: c_int, c_char, c_size_t, c_ptr, coll_opts_c
      character(kind=c_char), intent(in) :: path(*)
      integer(c_size_t), value :: record_size
      type(coll_opts_c), intent(in) :: opts
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_coll_open_c
    end function river_coll_open_c
    function river_coll_close_c(c) bind(C, name='river_coll_close')
      import :: c_int, c_ptr
      type(c_ptr), value :: c
      integer(c_int) :: river_coll_close_c
    end function river_coll_close_c
    function river_coll_stat_c(c, info) bind(C, name='river_coll_stat')
      import :: c_int, c_ptr, river_coll_info
      type(c_ptr), value :: c
      type(river_coll_info), intent(out) :: info
      integer(c_int) :: river_coll_stat_c
    end function river_coll_stat_c
    function river_coll_read_block_c(c, block, buf, bufsize, nrecords) &
        bind(C, name='river_coll_read_block')
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: c
      integer(c_int64_t), value :: block
      type(*), intent(inout) :: buf(*)
      integer(c_size_t), value :: bufsize
      integer(c_size_t), intent(out) :: nrecords
      integer(c_int) :: river_coll_read_block_c
    end function river_coll_read_block_c
    function river_coll_next_c(c, records, nrecords) &
        bind(C, name='river_coll_next')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: c
      type(c_ptr), intent(out) :: records
      integer(c_size_t), intent(out) :: nrecords
      integer(c_int) :: river_coll_next_c
    end function river_coll_next_c
    function river_coll_rewind_c(c) bind(C, name='river_coll_rewind')
      import :: c_int, c_ptr
      type(c_ptr), value :: c
      integer(c_int) :: river_coll_rewind_c
    end function river_coll_rewind_c
    function river_coll_verify_c(c, bad_block) bind(C, name='river_coll_verify')
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: c
      integer(c_int64_t), intent(out) :: bad_block
      integer(c_int) :: river_coll_verify_c
    end function river_coll_verify_c
    ! river/gensort.h (flags is C's unsigned), river/checksum.h
    function river_gensort_fill_c(first, count, flags, seed, buf) &
        bind(C, name='river_gensort_fill')
      import :: c_int, c_int64_t, c_size_t
      integer(c_int64_t), value :: first
      integer(c_size_t), value :: count
      integer(c_int), value :: flags
      integer(c_int64_t), value :: seed
      type(*), intent(inout) :: buf(*)
      integer(c_int) :: river_gensort_fill_c
    end function river_gensort_fill_c
    function river_crc32c_c(buf, len, crc) bind(C, name='river_crc32c')
      import :: c_int, c_size_t, c_int32_t
      type(*), intent(in) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_int32_t), intent(inout) :: crc
      integer(c_int) :: river_crc32c_c
    end function river_crc32c_c
  end interface

contains

  ! A string_fill for fetch_string: schema h's text form (d unused).
  function schema_format_fill(h, d, buf, len) result(rc)
    type(c_ptr), intent(in) :: h
    integer(c_int), intent(in) :: d
    character(kind=c_char), intent(out) :: buf(*)
    integer(c_size_t), intent(inout) :: len
    integer(c_int) :: rc
    rc = river_schema_format_c(h, buf, len)
  end function schema_format_fill

  ! ------------------------------------------------------------- schemas

  module procedure river_schema_parse
    type(c_ptr) :: out
    integer(c_int) :: rc
    out = c_null_ptr
    rc = river_schema_parse_c(c_str(text), out)
    if (rc == RIVER_SUCCESS) schema%ptr = out
    call river_check(rc, 'river_schema_parse', ierr)
  end procedure river_schema_parse

  module procedure river_schema_create_default
    type(c_ptr) :: out
    integer(c_int) :: rc
    out = c_null_ptr
    rc = river_schema_create_default_c(out)
    if (rc == RIVER_SUCCESS) schema%ptr = out
    call river_check(rc, 'river_schema_create_default', ierr)
  end procedure river_schema_create_default

  module procedure river_schema_clone
    type(c_ptr) :: out
    integer(c_int) :: rc
    out = c_null_ptr
    rc = river_schema_clone_c(schema%ptr, out)
    if (rc == RIVER_SUCCESS) copy%ptr = out
    call river_check(rc, 'river_schema_clone', ierr)
  end procedure river_schema_clone

  module procedure river_schema_destroy
    call river_schema_destroy_c(schema%ptr)
    schema%ptr = c_null_ptr
  end procedure river_schema_destroy

  module procedure river_schema_record_size
    integer(c_size_t) :: n
    integer(c_int) :: rc
    rc = river_schema_record_size_c(schema%ptr, n)
    if (rc == RIVER_SUCCESS) size = n
    call river_check(rc, 'river_schema_record_size', ierr)
  end procedure river_schema_record_size

  module procedure river_schema_nfields
    integer(c_int) :: cn, rc
    rc = river_schema_nfields_c(schema%ptr, cn)
    if (rc == RIVER_SUCCESS) n = cn
    call river_check(rc, 'river_schema_nfields', ierr)
  end procedure river_schema_nfields

  module procedure river_schema_field
    type(c_ptr) :: cname
    integer(c_int) :: ctype, rc
    integer(c_size_t) :: ccount, coffset
    rc = river_schema_field_c(schema%ptr, int(i, c_int), cname, ctype, &
                              ccount, coffset)
    if (rc == RIVER_SUCCESS) then
      if (present(name)) name = river_c_string(cname)
      if (present(type)) type = ctype
      if (present(count)) count = ccount
      if (present(offset)) offset = coffset
    end if
    call river_check(rc, 'river_schema_field', ierr)
  end procedure river_schema_field

  module procedure river_schema_key
    integer(c_int) :: cfield, rc
    integer(c_size_t) :: coffset, csize
    rc = river_schema_key_c(schema%ptr, cfield, coffset, csize)
    if (rc == RIVER_SUCCESS) then
      if (present(field)) field = cfield
      if (present(offset)) offset = coffset
      if (present(size)) size = csize
    end if
    call river_check(rc, 'river_schema_key', ierr)
  end procedure river_schema_key

  module procedure river_schema_find
    integer(c_int) :: cfield, rc
    rc = river_schema_find_c(schema%ptr, c_str(name), cfield)
    if (rc == RIVER_SUCCESS) field = cfield
    call river_check(rc, 'river_schema_find', ierr)
  end procedure river_schema_find

  module procedure river_schema_format
    integer(c_int) :: rc
    call fetch_string(schema_format_fill, schema%ptr, 0_c_int, text, rc)
    call river_check(rc, 'river_schema_format', ierr)
  end procedure river_schema_format

  module procedure river_schema_equal
    integer(c_int) :: ceq, rc
    rc = river_schema_equal_c(a%ptr, b%ptr, ceq)
    if (rc == RIVER_SUCCESS) equal = ceq /= 0
    call river_check(rc, 'river_schema_equal', ierr)
  end procedure river_schema_equal

  module procedure river_schema_compare
    integer(c_int) :: ccmp, rc
    rc = river_schema_compare_c(schema%ptr, a, b, ccmp)
    if (rc == RIVER_SUCCESS) cmp = ccmp
    call river_check(rc, 'river_schema_compare', ierr)
  end procedure river_schema_compare

  module procedure river_type_name
    name = river_c_string(river_type_name_c(int(type, c_int)))
  end procedure river_type_name

  ! ------------------------------------------------ single-disk collections

  module procedure river_coll_create
    type(coll_opts_c) :: opts
    character(kind=c_char), allocatable, target :: label_c(:)
    type(c_ptr) :: out
    integer(c_int) :: rc
    if (present(block_size)) opts%block_size = block_size
    if (present(direct_io)) opts%direct_io = merge(1, 0, direct_io)
    if (present(label)) call c_str_ptr(label, label_c, opts%label)
    out = c_null_ptr
    rc = river_coll_create_c(c_str(path), record_size, opts, out)
    if (rc == RIVER_SUCCESS) coll%ptr = out
    call river_check(rc, 'river_coll_create', ierr)
  end procedure river_coll_create

  module procedure river_coll_append
    call river_check(river_coll_append_c(coll%ptr, records, nrecords), &
                     'river_coll_append', ierr)
  end procedure river_coll_append

  module procedure river_coll_commit
    integer(c_int) :: rc
    rc = river_coll_commit_c(coll%ptr)
    if (rc /= RIVER_EINVAL) coll%ptr = c_null_ptr
    call river_check(rc, 'river_coll_commit', ierr)
  end procedure river_coll_commit

  module procedure river_coll_open
    type(coll_opts_c) :: opts
    type(c_ptr) :: out
    integer(c_int) :: rc
    if (present(direct_io)) opts%direct_io = merge(1, 0, direct_io)
    out = c_null_ptr
    rc = river_coll_open_c(c_str(path), record_size, opts, out)
    if (rc == RIVER_SUCCESS) coll%ptr = out
    call river_check(rc, 'river_coll_open', ierr)
  end procedure river_coll_open

  module procedure river_coll_close
    integer(c_int) :: rc
    rc = river_coll_close_c(coll%ptr)
    coll%ptr = c_null_ptr
    call river_check(rc, 'river_coll_close', ierr)
  end procedure river_coll_close

  module procedure river_coll_stat
    type(river_coll_info) :: cinfo
    integer(c_int) :: rc
    rc = river_coll_stat_c(coll%ptr, cinfo)
    if (rc == RIVER_SUCCESS) info = cinfo
    call river_check(rc, 'river_coll_stat', ierr)
  end procedure river_coll_stat

  module procedure river_coll_read_block
    integer(c_size_t) :: n
    integer(c_int) :: rc
    rc = river_coll_read_block_c(coll%ptr, block, buf, bufsize, n)
    if (rc == RIVER_SUCCESS) nrecords = n
    call river_check(rc, 'river_coll_read_block', ierr)
  end procedure river_coll_read_block

  module procedure river_coll_next_ptr
    type(c_ptr) :: r
    integer(c_size_t) :: n
    integer(c_int) :: rc
    records = c_null_ptr
    nrecords = 0
    rc = river_coll_next_c(coll%ptr, r, n)
    if (rc == RIVER_SUCCESS) then
      records = r
      nrecords = n
    else if (rc == RIVER_EOS) then
      if (present(ierr)) ierr = RIVER_EOS
      return
    end if
    call river_check(rc, 'river_coll_next', ierr)
  end procedure river_coll_next_ptr

  module procedure river_coll_next_bytes
    type(river_coll_info) :: info
    type(c_ptr) :: r
    integer(c_size_t) :: n, nbytes
    integer(c_int) :: rc
    nrecords = 0
    rc = river_coll_stat_c(coll%ptr, info)
    if (rc == RIVER_SUCCESS) rc = river_coll_next_c(coll%ptr, r, n)
    if (rc == RIVER_EOS) then
      call bytes_from(c_null_ptr, 0_c_size_t, buf)
      if (present(ierr)) ierr = RIVER_EOS
      return
    end if
    if (rc == RIVER_SUCCESS) then
      nbytes = n * info%record_size
      call bytes_from(r, nbytes, buf)
      nrecords = n
    end if
    call river_check(rc, 'river_coll_next', ierr)
  end procedure river_coll_next_bytes

  module procedure river_coll_rewind
    call river_check(river_coll_rewind_c(coll%ptr), 'river_coll_rewind', ierr)
  end procedure river_coll_rewind

  module procedure river_coll_verify
    integer(c_int64_t) :: bad
    integer(c_int) :: rc
    rc = river_coll_verify_c(coll%ptr, bad)
    if (rc /= RIVER_SUCCESS .and. present(bad_block)) bad_block = bad
    call river_check(rc, 'river_coll_verify', ierr)
  end procedure river_coll_verify

  ! ----------------------------------------------- gensort and checksums

  module procedure river_gensort_fill
    call river_check(river_gensort_fill_c(first, count, int(flags, c_int), &
                                          seed, buf), &
                     'river_gensort_fill', ierr)
  end procedure river_gensort_fill

  module procedure river_crc32c
    call river_check(river_crc32c_c(buf, len, crc), 'river_crc32c', ierr)
  end procedure river_crc32c

end submodule river_coll_impl
