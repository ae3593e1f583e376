/** The list shape and cursor of the list endpoints moved to the store package (shared with media). */
export { listPage, pageQuery, type ListPage, type PageQuery } from '@gw/store';
