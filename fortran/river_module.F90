! river_module.F90 - submodule river_module_impl of module river: modules
! written in Fortran (river/module.h). river_module_register builds C's
! river_module_decl (module_decl_c) from its optional arguments and hands
! C the function's c_funloc: a bind(C) function taking type(c_ptr),
! value and returning integer(c_int) is a river_module_fn. The context
! calls pass the ctx c_ptr straight through. To the readers (get,
! try_get, select) RIVER_EOS and RIVER_EAGAIN are statuses, never errors;
! the byte views of get size their arrays with the input's record size.
! The C functions' outputs are intent(inout), as in river_flow.F90.
submodule (river) river_module_impl
  implicit none

  ! C's river_module_decl (schema and check: always NULL from Fortran).
  type, bind(C) :: module_decl_c
    integer(c_int) :: min_inputs = 0, max_inputs = 0
    integer(c_int) :: min_outputs = 0, max_outputs = 0
    integer(c_int) :: shares_rank = 0
    type(c_ptr) :: args = c_null_ptr
    type(c_funptr) :: schema = c_null_funptr
    type(c_ptr) :: doc = c_null_ptr
    type(c_funptr) :: check = c_null_funptr
  end type module_decl_c

  ! module_decl_c must be the size of C's river_module_decl (see
  ! layout_ok in river).
  integer, parameter :: decl_layout_ok = 1 / merge(1, 0, &
      c_sizeof(module_decl_c()) == RIVER__SIZEOF_MODULE_DECL)

  interface
    function river_module_register_c(name, fn, decl, user) &
        bind(C, name='river_module_register')
      import :: c_char, c_funptr, c_int, c_ptr, module_decl_c
      character(kind=c_char), intent(in) :: name(*)
      type(c_funptr), value :: fn
      type(module_decl_c), intent(in) :: decl
      type(c_ptr), value :: user
      integer(c_int) :: river_module_register_c
    end function river_module_register_c
    function river_ctx_user_c(ctx) bind(C, name='river_ctx_user')
      import :: c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr) :: river_ctx_user_c
    end function river_ctx_user_c
    function river_ctx_instance_c(ctx, instance, ninstances) &
        bind(C, name='river_ctx_instance')
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), intent(inout) :: instance, ninstances
      integer(c_int) :: river_ctx_instance_c
    end function river_ctx_instance_c
    function river_ctx_stage_c(ctx) bind(C, name='river_ctx_stage')
      import :: c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr) :: river_ctx_stage_c
    end function river_ctx_stage_c
    function river_ctx_log_c(ctx, level, msg) bind(C, name='river__f_ctx_log')
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: ctx
      integer(c_int), value :: level
      character(kind=c_char), intent(in) :: msg(*)
      integer(c_int) :: river_ctx_log_c
    end function river_ctx_log_c
    function river_ctx_ports_c(ctx, ninputs, noutputs) &
        bind(C, name='river_ctx_ports')
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), intent(inout) :: ninputs, noutputs
      integer(c_int) :: river_ctx_ports_c
    end function river_ctx_ports_c
    function river_input_schema_c(ctx, input, schema) &
        bind(C, name='river_input_schema')
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: input
      type(c_ptr), intent(inout) :: schema
      integer(c_int) :: river_input_schema_c
    end function river_input_schema_c
    function river_output_schema_c(ctx, output, schema) &
        bind(C, name='river_output_schema')
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: output
      type(c_ptr), intent(inout) :: schema
      integer(c_int) :: river_output_schema_c
    end function river_output_schema_c
    function schema_clone_c(s, out) bind(C, name='river_schema_clone')
      import :: c_int, c_ptr
      type(c_ptr), value :: s
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: schema_clone_c
    end function schema_clone_c
    function schema_record_size_c(s, size) &
        bind(C, name='river_schema_record_size')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t), intent(inout) :: size
      integer(c_int) :: schema_record_size_c
    end function schema_record_size_c
    function river_arg_str_c(ctx, name, value) bind(C, name='river_arg_str')
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), intent(inout) :: value
      integer(c_int) :: river_arg_str_c
    end function river_arg_str_c
    function river_arg_int_c(ctx, name, value) bind(C, name='river_arg_int')
      import :: c_char, c_int, c_int64_t, c_ptr
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), intent(inout) :: value
      integer(c_int) :: river_arg_int_c
    end function river_arg_int_c
    function river_arg_uint_c(ctx, name, value) bind(C, name='river_arg_uint')
      import :: c_char, c_int, c_int64_t, c_ptr
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), intent(inout) :: value
      integer(c_int) :: river_arg_uint_c
    end function river_arg_uint_c
    function river_arg_double_c(ctx, name, value) &
        bind(C, name='river_arg_double')
      import :: c_char, c_double, c_int, c_ptr
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: name(*)
      real(c_double), intent(inout) :: value
      integer(c_int) :: river_arg_double_c
    end function river_arg_double_c
    function river_arg_bool_c(ctx, name, value) bind(C, name='river_arg_bool')
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(inout) :: value
      integer(c_int) :: river_arg_bool_c
    end function river_arg_bool_c
    function river_get_c(ctx, input, records, n) bind(C, name='river_get')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: ctx
      integer(c_int), value :: input
      type(c_ptr), intent(inout) :: records
      integer(c_size_t), intent(inout) :: n
      integer(c_int) :: river_get_c
    end function river_get_c
    function river_try_get_c(ctx, input, records, n) &
        bind(C, name='river_try_get')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: ctx
      integer(c_int), value :: input
      type(c_ptr), intent(inout) :: records
      integer(c_size_t), intent(inout) :: n
      integer(c_int) :: river_try_get_c
    end function river_try_get_c
    function river_select_c(ctx, input) bind(C, name='river_select')
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), intent(inout) :: input
      integer(c_int) :: river_select_c
    end function river_select_c
    function river_plugin_load_c(path) bind(C, name='river_plugin_load')
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int) :: river_plugin_load_c
    end function river_plugin_load_c
    function output_record_size_c(ctx, output) &
        bind(C, name='river__f_output_record_size')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: ctx
      integer(c_int), value :: output
      integer(c_size_t) :: output_record_size_c
    end function output_record_size_c
    function river_put_ptr_c(ctx, output, records, n) bind(C, name='river_put')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: ctx
      integer(c_int), value :: output
      type(c_ptr), value :: records
      integer(c_size_t), value :: n
      integer(c_int) :: river_put_ptr_c
    end function river_put_ptr_c
    function river_reserve_c(ctx, output, buf, max) &
        bind(C, name='river_reserve')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: ctx
      integer(c_int), value :: output
      type(c_ptr), intent(inout) :: buf
      integer(c_size_t), intent(inout) :: max
      integer(c_int) :: river_reserve_c
    end function river_reserve_c
    function river_commit_c(ctx, output, n) bind(C, name='river_commit')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: ctx
      integer(c_int), value :: output
      integer(c_size_t), value :: n
      integer(c_int) :: river_commit_c
    end function river_commit_c
    function river_end_unit_c(ctx, output) bind(C, name='river_end_unit')
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: output
      integer(c_int) :: river_end_unit_c
    end function river_end_unit_c
    ! comm and wait through shims: Fortran holds MPI_Fint handles
    function river_ctx_comm_c(ctx, comm) bind(C, name='river__f_ctx_comm')
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), intent(inout) :: comm
      integer(c_int) :: river_ctx_comm_c
    end function river_ctx_comm_c
    function river_ctx_wait_c(ctx, req) bind(C, name='river__f_ctx_wait')
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), intent(inout) :: req
      integer(c_int) :: river_ctx_wait_c
    end function river_ctx_wait_c
    function river_ctx_stats_c(ctx, st) bind(C, name='river_ctx_stats')
      import :: c_int, c_ptr, river_module_stats
      type(c_ptr), value :: ctx
      type(river_module_stats), intent(inout) :: st
      integer(c_int) :: river_ctx_stats_c
    end function river_ctx_stats_c
    function river_ctx_keep_gd_c(ctx, gd) bind(C, name='river_ctx_keep_gd')
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx, gd
      integer(c_int) :: river_ctx_keep_gd_c
    end function river_ctx_keep_gd_c
  end interface

contains

  ! For the readers: RIVER_EOS and RIVER_EAGAIN are statuses (into ierr,
  ! if given, never a stop); any other code goes to river_check.
  subroutine status(rc, what, ierr)
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: what
    integer, optional, intent(out) :: ierr
    if (rc == RIVER_EOS .or. rc == RIVER_EAGAIN) then
      if (present(ierr)) ierr = int(rc)
      return
    end if
    call river_check(rc, what, ierr)
  end subroutine status

  ! get (block) or try_get: records and n set only on success.
  function get_any(ctx, input, block, records, n) result(rc)
    type(c_ptr), intent(in) :: ctx
    integer, intent(in) :: input
    logical, intent(in) :: block
    type(c_ptr), intent(out) :: records
    integer(c_size_t), intent(out) :: n
    integer(c_int) :: rc
    type(c_ptr) :: r
    integer(c_size_t) :: k
    r = c_null_ptr
    k = 0
    if (block) then
      rc = river_get_c(ctx, int(input, c_int), r, k)
    else
      rc = river_try_get_c(ctx, int(input, c_int), r, k)
    end if
    records = c_null_ptr
    n = 0
    if (rc == RIVER_SUCCESS) then
      records = r
      n = k
    end if
  end function get_any

  ! The byte views: the message as n * record size bytes of input.
  subroutine get_bytes(ctx, input, block, what, bytes, n, ierr)
    type(c_ptr), intent(in) :: ctx
    integer, intent(in) :: input
    logical, intent(in) :: block
    character(len=*), intent(in) :: what
    integer(c_int8_t), pointer, intent(out) :: bytes(:)
    integer(c_size_t), intent(out) :: n
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: r, s
    integer(c_size_t) :: rs
    integer(c_int) :: rc
    bytes => null()
    rc = get_any(ctx, input, block, r, n)
    if (rc == RIVER_SUCCESS) then
      rs = 0
      rc = river_input_schema_c(ctx, int(input, c_int), s)
      if (rc == RIVER_SUCCESS) rc = schema_record_size_c(s, rs)
      if (rc == RIVER_SUCCESS) then
        call c_f_pointer(r, bytes, [n * rs])
      else
        n = 0
      end if
    end if
    call status(rc, what, ierr)
  end subroutine get_bytes

  ! A copy of a borrowed schema (input or output), as river_schema.
  subroutine schema_copy(rc, borrowed, schema, what, ierr)
    integer(c_int), intent(inout) :: rc
    type(c_ptr), intent(in) :: borrowed
    type(river_schema), intent(out) :: schema
    character(len=*), intent(in) :: what
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: out
    out = c_null_ptr
    if (rc == RIVER_SUCCESS) rc = schema_clone_c(borrowed, out)
    if (rc == RIVER_SUCCESS) schema%ptr = out
    call river_check(rc, what, ierr)
  end subroutine schema_copy

  ! ---------------------------------------------------------- registering

  module procedure river_module_register
    type(module_decl_c) :: d
    character(kind=c_char), allocatable, target :: args_c(:), doc_c(:)
    type(c_ptr) :: u
    if (present(min_inputs)) d%min_inputs = int(min_inputs, c_int)
    if (present(max_inputs)) d%max_inputs = int(max_inputs, c_int)
    if (present(min_outputs)) d%min_outputs = int(min_outputs, c_int)
    if (present(max_outputs)) d%max_outputs = int(max_outputs, c_int)
    if (present(shares_rank)) d%shares_rank = merge(1, 0, shares_rank)
    if (present(args)) call c_str_ptr(args, args_c, d%args)
    if (present(doc)) call c_str_ptr(doc, doc_c, d%doc)
    u = c_null_ptr
    if (present(user)) u = user
    call river_check(river_module_register_c(c_str(name), c_funloc(fn), d, u), &
                     'river_module_register', ierr)
  end procedure river_module_register

  module procedure river_plugin_load
    call river_check(river_plugin_load_c(c_str(path)), 'river_plugin_load', &
                     ierr)
  end procedure river_plugin_load

  ! ---------------------------------------------------------- who am I

  module procedure river_ctx_user
    user = river_ctx_user_c(ctx)
  end procedure river_ctx_user

  module procedure river_ctx_instance
    integer(c_int) :: i, n, rc
    i = -1
    n = 0
    rc = river_ctx_instance_c(ctx, i, n)
    if (present(instance)) instance = int(i)
    if (present(ninstances)) ninstances = int(n)
    call river_check(rc, 'river_ctx_instance', ierr)
  end procedure river_ctx_instance

  module procedure river_ctx_log
    call river_check(river_ctx_log_c(ctx, int(level, c_int), c_str(msg)), &
                     'river_ctx_log', ierr)
  end procedure river_ctx_log

  module procedure river_ctx_stage
    type(c_ptr) :: p
    p = river_ctx_stage_c(ctx)
    if (c_associated(p)) then
      stage = river_c_string(p)
      call river_check(RIVER_SUCCESS, 'river_ctx_stage', ierr)
    else
      stage = ''
      call river_check(RIVER_EINVAL, 'river_ctx_stage', ierr)
    end if
  end procedure river_ctx_stage

  module procedure river_ctx_ports
    integer(c_int) :: i, o, rc
    i = 0
    o = 0
    rc = river_ctx_ports_c(ctx, i, o)
    if (present(ninputs)) ninputs = int(i)
    if (present(noutputs)) noutputs = int(o)
    call river_check(rc, 'river_ctx_ports', ierr)
  end procedure river_ctx_ports

  module procedure river_input_schema
    type(c_ptr) :: s
    integer(c_int) :: rc
    s = c_null_ptr
    rc = river_input_schema_c(ctx, int(input, c_int), s)
    call schema_copy(rc, s, schema, 'river_input_schema', ierr)
  end procedure river_input_schema

  module procedure river_output_schema
    type(c_ptr) :: s
    integer(c_int) :: rc
    s = c_null_ptr
    rc = river_output_schema_c(ctx, int(output, c_int), s)
    call schema_copy(rc, s, schema, 'river_output_schema', ierr)
  end procedure river_output_schema

  ! ---------------------------------------------------------- arguments

  module procedure river_arg_str
    type(c_ptr) :: p
    integer(c_int) :: rc
    p = c_null_ptr
    rc = river_arg_str_c(ctx, c_str(name), p)
    if (rc == RIVER_SUCCESS .and. c_associated(p)) then
      value = river_c_string(p)
    else
      value = ''
    end if
    call river_check(rc, 'river_arg_str', ierr)
  end procedure river_arg_str

  module procedure river_arg_int
    integer(c_int64_t) :: v
    integer(c_int) :: rc
    v = 0
    rc = river_arg_int_c(ctx, c_str(name), v)
    value = v
    call river_check(rc, 'river_arg_int', ierr)
  end procedure river_arg_int

  module procedure river_arg_uint
    integer(c_int64_t) :: v
    integer(c_int) :: rc
    v = 0
    rc = river_arg_uint_c(ctx, c_str(name), v)
    value = v
    call river_check(rc, 'river_arg_uint', ierr)
  end procedure river_arg_uint

  module procedure river_arg_double
    real(c_double) :: v
    integer(c_int) :: rc
    v = 0
    rc = river_arg_double_c(ctx, c_str(name), v)
    value = v
    call river_check(rc, 'river_arg_double', ierr)
  end procedure river_arg_double

  module procedure river_arg_bool
    integer(c_int) :: v, rc
    v = 0
    rc = river_arg_bool_c(ctx, c_str(name), v)
    value = v /= 0
    call river_check(rc, 'river_arg_bool', ierr)
  end procedure river_arg_bool

  ! --------------------------------------------------------------- data

  module procedure river_get_ptr
    call status(get_any(ctx, input, .true., records, n), 'river_get', ierr)
  end procedure river_get_ptr

  module procedure river_get_bytes
    call get_bytes(ctx, input, .true., 'river_get', bytes, n, ierr)
  end procedure river_get_bytes

  module procedure river_try_get_ptr
    call status(get_any(ctx, input, .false., records, n), 'river_try_get', &
                ierr)
  end procedure river_try_get_ptr

  module procedure river_try_get_bytes
    call get_bytes(ctx, input, .false., 'river_try_get', bytes, n, ierr)
  end procedure river_try_get_bytes

  module procedure river_select
    integer(c_int) :: i, rc
    i = -1
    rc = river_select_c(ctx, i)
    input = int(i)
    call status(rc, 'river_select', ierr)
  end procedure river_select

  module procedure river_put_array
    type(c_ptr) :: base
    integer(c_int) :: rc
    rc = river_f_records(records, n, &
                         output_record_size_c(ctx, int(output, c_int)), &
                         c_str('river_put'), base)
    if (rc == RIVER_SUCCESS) rc = river_put_ptr_c(ctx, int(output, c_int), base, n)
    call river_check(rc, 'river_put', ierr)
  end procedure river_put_array

  module procedure river_put_ptr
    call river_check(river_put_ptr_c(ctx, int(output, c_int), records, n), &
                     'river_put', ierr)
  end procedure river_put_ptr

  module procedure river_reserve
    integer(c_int) :: rc
    buf = c_null_ptr
    max = 0
    rc = river_reserve_c(ctx, int(output, c_int), buf, max)
    if (rc /= RIVER_SUCCESS) buf = c_null_ptr
    call river_check(rc, 'river_reserve', ierr)
  end procedure river_reserve

  module procedure river_commit
    call river_check(river_commit_c(ctx, int(output, c_int), n), &
                     'river_commit', ierr)
  end procedure river_commit

  module procedure river_end_unit
    call river_check(river_end_unit_c(ctx, int(output, c_int)), &
                     'river_end_unit', ierr)
  end procedure river_end_unit

  ! ---------------------------------------------------- talking to peers

  module procedure river_ctx_comm
    integer(c_int) :: c, rc
    c = 0
    rc = river_ctx_comm_c(ctx, c)
    if (rc == RIVER_SUCCESS) comm%MPI_VAL = int(c)
    call river_check(rc, 'river_ctx_comm', ierr)
  end procedure river_ctx_comm

  module procedure river_ctx_wait
    integer(c_int) :: r, rc
    r = int(request%MPI_VAL, c_int)
    rc = river_ctx_wait_c(ctx, r)
    request%MPI_VAL = int(r)
    call river_check(rc, 'river_ctx_wait', ierr)
  end procedure river_ctx_wait

  ! ---------------------------------------------------------------- stats

  module procedure river_ctx_stats
    type(river_module_stats) :: s
    integer(c_int) :: rc
    rc = river_ctx_stats_c(ctx, s)
    if (rc == RIVER_SUCCESS) stats = s
    call river_check(rc, 'river_ctx_stats', ierr)
  end procedure river_ctx_stats

  module procedure river_ctx_keep_gd
    call river_check(river_ctx_keep_gd_c(ctx, gd%ptr), 'river_ctx_keep_gd', &
                     ierr)
  end procedure river_ctx_keep_gd

end submodule river_module_impl
